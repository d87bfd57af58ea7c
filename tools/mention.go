package tools

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"
)

// bufferWait bounds asking the editor about a mentioned path the disk
// does not have: a prompt never waits long on a mention.
const bufferWait = 2 * time.Second

// Mentions finds the @path mentions of a prompt: "@main.go",
// "see @src/app.py." An @ counts only at the start of a word (not in
// an e-mail address or a Markdown link's text, whose link the editor
// sends as a resource). It returns the lines to append for the model
// — "[attached file: /abs/path]" for a file of the workspace, and one
// line for a mention outside it or of a path that does not exist — and
// the same problems as notes for the user. A word without "/" or "." that
// names nothing ("@here") is not a mention. A path the disk does not have
// is asked of env's file view, so a new file the editor holds only as an
// unsaved buffer is attached too (one view of files).
func Mentions(ctx context.Context, env Env, prompt string) (lines, notes []string) {
	seen := map[string]bool{}
	for _, m := range mentionWords(prompt) {
		if seen[m] {
			continue
		}
		seen[m] = true
		abs, err := Resolve(env, m)
		if err != nil {
			if errors.Is(err, ErrOutside) {
				lines = append(lines, "[@"+m+" is outside the workspace — not attached]")
				notes = append(notes, "@"+m+" is outside the workspace; it was not attached")
			}
			continue
		}
		fi, err := os.Stat(abs)
		if err != nil && strings.ContainsAny(m, "/.") && inBuffer(ctx, env, abs) {
			lines = append(lines, "[attached file: "+abs+"]")
			continue
		}
		switch {
		case err != nil && !strings.ContainsAny(m, "/."):
			continue // a word, not a path
		case err != nil:
			lines = append(lines, "[@"+m+" does not exist in the workspace — not attached]")
			notes = append(notes, "@"+m+" does not exist; it was not attached")
		case fi.IsDir():
			lines = append(lines, "[attached directory: "+abs+"]")
		default:
			if strings.Contains(prompt, "[attached file: "+abs+"]") {
				continue
			}
			lines = append(lines, "[attached file: "+abs+"]")
		}
	}
	return lines, notes
}

// inBuffer reports whether env's file view has a text for abs that the
// disk does not (an editor's unsaved new file).
func inBuffer(ctx context.Context, env Env, abs string) bool {
	ctx, cancel := context.WithTimeout(ctx, bufferWait)
	defer cancel()
	_, err := env.ReadFile(ctx, abs)
	return err == nil
}

// mentionWords returns the paths written after an @ that starts a word.
func mentionWords(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '@' || (i > 0 && !strings.ContainsRune(" \t\n(\"'`", rune(s[i-1]))) {
			continue
		}
		j := i + 1
		for j < len(s) && isPathByte(s[j]) {
			j++
		}
		w := strings.TrimRight(s[i+1:j], ".,;:!?")
		if w != "" {
			out = append(out, w)
		}
		i = j - 1
	}
	return out
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("._-/~+", c) >= 0 || c >= 0x80
}
