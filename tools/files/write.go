package files

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/mm-agent/mm/fileedit"
	"github.com/mm-agent/mm/tools"
)

//go:embed write.md
var writeDesc string

type writeParams struct {
	Path    string `json:"path" desc:"file path, relative to the workspace"`
	Content string `json:"content" desc:"the whole new content of the file"`
}

func writeTool(opts Options) tools.Tool {
	desc := strings.ReplaceAll(strings.TrimSpace(writeDesc), "{{budget}}", strconv.Itoa(CharBudget(opts.MaxTokens)))
	return tools.New(tools.Spec[writeParams]{
		Name:        "write_file",
		Description: desc,
		Kind:        tools.KindEdit,
		Caps:        tools.Reads | tools.WritesWorkspace,
		Describe: func(env tools.Env, p writeParams) tools.Call {
			return describePath(env, "Write", p.Path, 0)
		},
		Preflight: func(ctx context.Context, env tools.Env, path string) string {
			_, _, _, refusal := target(ctx, env, path, false)
			return refusal
		},
		Run: func(ctx context.Context, env tools.Env, p writeParams) (tools.Result, error) {
			abs, old, exists, refusal := target(ctx, env, p.Path, false)
			if refusal != "" {
				return tools.Errorf("%s", refusal), nil
			}
			var before *string
			if exists {
				s := string(old)
				before = &s
			}
			verb := "created"
			if exists {
				verb = "wrote"
			}
			summary := fmt.Sprintf("%s %s (%d lines, %d bytes)", verb, p.Path, countLines(p.Content), len(p.Content))
			return commit(ctx, env, opts, change{tool: "write_file", verb: "Write", abs: abs, rel: p.Path, old: before, new: []byte(p.Content), summary: summary})
		},
	})
}

// target resolves a path for a write and runs the read-before-write check.
// mustExist is edit_file's rule. The refusal is the repair text.
func target(ctx context.Context, env tools.Env, path string, mustExist bool) (abs string, current []byte, exists bool, refusal string) {
	abs, err := tools.Resolve(env, path)
	if err != nil {
		return "", nil, false, err.Error()
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return "", nil, false, fmt.Sprintf("[error: %s is a directory — give a file path]", path)
	}
	current, err = env.ReadFile(ctx, abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if mustExist {
			return "", nil, false, fmt.Sprintf("[error: %s does not exist — to create a new file use write_file]", path)
		}
		return abs, nil, false, ""
	case err != nil:
		return "", nil, false, fileError(err, path).Text
	}
	if r := env.Reads().Check(abs, path, current); r != "" {
		return "", nil, false, r
	}
	return abs, current, true, ""
}

// change is one file change ready to be approved and written.
type change struct {
	tool, verb string
	abs, rel   string
	old        *string // nil for a new file
	new        []byte
	summary    string
}

// commit asks permission (showing the diff), writes atomically, records
// the new content as read, and reports the diff and the diagnostics the
// change introduced.
func commit(ctx context.Context, env tools.Env, opts Options, c change) (tools.Result, error) {
	diff := tools.Diff{Path: c.abs, Old: c.old, New: string(c.new)}
	loc := []tools.Location{{Path: c.abs, Line: firstChangedLine(c.old, c.new)}}
	d, err := env.Approve(ctx, tools.Approval{
		Tool: c.tool, Kind: tools.KindEdit, Caps: tools.WritesWorkspace, Title: c.verb + " " + c.rel,
		Key: c.tool, Subject: c.rel, Diffs: []tools.Diff{diff}, Locations: loc,
	})
	if err != nil {
		return tools.Result{}, err
	}
	if !d.Allowed {
		return tools.Errorf("[error: %s was not changed: %s. Do not retry the same change; ask the user what they want instead]", c.rel, d.Reason), nil
	}
	var before any
	if opts.Diagnostics != nil {
		before = opts.Diagnostics.Before(ctx, c.abs)
	}
	var old []byte
	if c.old != nil {
		old = []byte(*c.old)
	}
	var mode fs.FileMode = 0o644
	if err := tools.WriteIfUnchanged(ctx, env, c.abs, c.rel, old, c.old != nil, c.new, mode); err != nil {
		var changed *tools.ChangedError
		if errors.As(err, &changed) {
			env.Reads().Forget(c.abs)
			return tools.Errorf("[error: %s]", err), nil
		}
		return tools.Errorf("[error: could not write %s: %v — the file is unchanged]", c.rel, err), nil
	}
	env.Reads().Record(c.abs, c.new)
	text := c.summary + "\n" + fileedit.Diff(c.rel, old, c.new)
	if opts.Diagnostics != nil {
		if diag := opts.Diagnostics.After(ctx, before, c.abs, c.new); diag != "" {
			text = strings.TrimRight(text, "\n") + "\n" + diag
		}
	}
	return tools.Result{Text: text, Diffs: []tools.Diff{diff}, Locations: loc}, nil
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// firstChangedLine is the 1-based line where old and new first differ,
// for the editor to jump to.
func firstChangedLine(old *string, new []byte) int {
	if old == nil {
		return 1
	}
	o, n := *old, string(new)
	i := 0
	for i < len(o) && i < len(n) && o[i] == n[i] {
		i++
	}
	return strings.Count(o[:i], "\n") + 1
}
