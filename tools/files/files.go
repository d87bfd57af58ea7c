// Package files holds the file tools: read_file, write_file and edit_file.
// Edits go through fileedit (tolerant but safe matching, atomic writes) and
// the read-before-write tracker of the session.
package files

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/mm-agent/mm/fileedit/disk"
	"github.com/mm-agent/mm/tools"
)

// Options configure the file tools.
type Options struct {
	// MaxOutput bounds what read_file returns, in characters; 0 means
	// 16,000.
	MaxOutput int
	// MaxTokens is the model's max_tokens, used for write_file's size
	// budget; 0 means 4,096.
	MaxTokens int
	// Diagnostics reports the problems an edit introduced; nil means none.
	Diagnostics Diagnostics
}

// Diagnostics is the LSP bridge as the edit tools see it: a snapshot
// before a write, and the text to append after it.
type Diagnostics interface {
	Before(ctx context.Context, path string) any
	After(ctx context.Context, before any, path string, content []byte) string
}

// New returns read_file, write_file and edit_file.
func New(opts Options) []tools.Tool {
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = 16000
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 4096
	}
	return []tools.Tool{readTool(opts), writeTool(opts), editTool(opts)}
}

// CharBudget is how many characters of file content fit in max_tokens,
// keeping room for reasoning and the JSON around them: ≈ 1.5 characters per
// token, rounded down to 500 (≈ 3 characters per token were measured
// for a 12,500-character write_file cut at 4,096 tokens; half leaves the
// margin). It matches the budget of the truncated-call note.
func CharBudget(maxTokens int) int {
	return maxTokens * 3 / 2 / 500 * 500
}

//go:embed read.md
var readDesc string

type readParams struct {
	Path        string `json:"path" desc:"file or directory, relative to the workspace"`
	StartLine   int    `json:"start_line,omitempty" desc:"first line to read (1-based)"`
	EndLine     int    `json:"end_line,omitempty" desc:"last line to read"`
	LineNumbers bool   `json:"line_numbers,omitempty" desc:"prefix each line with its number"`
}

func readTool(opts Options) tools.Tool {
	return tools.New(tools.Spec[readParams]{
		Name:        "read_file",
		Description: strings.TrimSpace(readDesc),
		Kind:        tools.KindRead,
		Caps:        tools.Reads,
		Describe: func(env tools.Env, p readParams) tools.Call {
			return describePath(env, "Read", p.Path, p.StartLine)
		},
		Run: func(ctx context.Context, env tools.Env, p readParams) (tools.Result, error) {
			return readFile(ctx, env, p, opts.MaxOutput)
		},
	})
}

func describePath(env tools.Env, verb, p string, line int) tools.Call {
	c := tools.Call{Title: verb + " " + p}
	if abs, err := tools.Resolve(env, p); err == nil {
		c.Locations = []tools.Location{{Path: abs, Line: line}}
	}
	return c
}

func readFile(ctx context.Context, env tools.Env, p readParams, max int) (tools.Result, error) {
	abs, err := tools.Resolve(env, p.Path)
	if err != nil {
		return tools.Errorf("%s", err.Error()), nil
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return listDir(abs, p.Path)
	}
	data, err := env.ReadFile(ctx, abs)
	if err != nil {
		return fileError(err, p.Path), nil
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return tools.Errorf("[error: %s is a binary file (%d bytes) — read_file shows text only; use bash (e.g. `file %s`, `xxd %s | head`)]", p.Path, len(data), p.Path, p.Path), nil
	}
	env.Reads().Record(abs, data)
	loc := []tools.Location{{Path: abs, Line: max1(p.StartLine)}}
	text := string(data)
	if text == "" {
		return tools.Result{Text: "[" + p.Path + " is empty]", Locations: loc}, nil
	}
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	start, end := max1(p.StartLine), p.EndLine
	if end <= 0 || end > len(lines) {
		end = len(lines)
	}
	if start > len(lines) {
		return tools.Errorf("[error: %s has %d lines; start_line %d is past the end]", p.Path, len(lines), start), nil
	}
	if start > end {
		return tools.Errorf("[error: start_line %d is after end_line %d]", start, end), nil
	}
	var b strings.Builder
	shown := start - 1
	for i := start - 1; i < end; i++ {
		line := lines[i]
		if p.LineNumbers {
			line = strconv.Itoa(i+1) + "\t" + line
		}
		if b.Len()+len(line) > max && i > start-1 {
			break
		}
		b.WriteString(line)
		shown = i + 1
	}
	out := b.String()
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	if shown < end || start > 1 || end < len(lines) {
		out += fmt.Sprintf("[lines %d–%d of %d", start, shown, len(lines))
		if shown < len(lines) {
			out += fmt.Sprintf("; read more with start_line=%d", shown+1)
		}
		out += "]\n"
	}
	return tools.Result{Text: out, Locations: loc}, nil
}

func listDir(abs, rel string) (tools.Result, error) {
	entries, err := os.ReadDir(abs)
	if err != nil {
		return fileError(err, rel), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[%s is a directory with %d entries]\n", rel, len(entries))
	for i, e := range entries {
		if i == 200 {
			fmt.Fprintf(&b, "[… %d more; use bash `ls` or `find` to see them]\n", len(entries)-i)
			break
		}
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		b.WriteString(name + "\n")
	}
	return tools.Result{Text: b.String(), Locations: []tools.Location{{Path: abs}}}, nil
}

func fileError(err error, rel string) tools.Result {
	var big *disk.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return tools.Errorf("[error: %s does not exist — check the path (list the directory with read_file on it, or bash `ls`)]", rel)
	case errors.Is(err, fs.ErrPermission):
		return tools.Errorf("[error: permission denied for %s]", rel)
	case errors.As(err, &big):
		return tools.Errorf("[error: %s is %s, more than mm reads (%s) — look at parts of it with bash: `head -n 100 %s`, `grep -n WORD %s`, `sed -n '1000,1100p' %s`]",
			rel, disk.Human(big.Size), disk.Human(big.Limit), rel, rel, rel)
	case errors.Is(err, disk.ErrNotRegular):
		return tools.Errorf("[error: %s is not a regular file (a FIFO, a device or a socket) — mm reads and edits regular files only; bash `ls -l %s` shows what it is]", rel, rel)
	case errors.Is(err, disk.ErrOutside):
		return tools.Errorf("[error: %s leads out of the workspace (a symlink) — use a path inside it]", rel)
	}
	return tools.Errorf("[error: cannot read %s: %v]", rel, err)
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}
