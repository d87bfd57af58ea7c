package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/tools"
)

func TestMentions(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src", "app.py"), []byte("x = 1\n"), 0o644)
	e := env{dir}
	for _, tt := range []struct {
		prompt       string
		lines, notes []string
	}{
		{"fix @main.go please", []string{"[attached file: " + filepath.Join(dir, "main.go") + "]"}, nil},
		{"compare @main.go and @src/app.py, then @main.go again.", []string{
			"[attached file: " + filepath.Join(dir, "main.go") + "]",
			"[attached file: " + filepath.Join(dir, "src", "app.py") + "]",
		}, nil},
		{"look in @src/", []string{"[attached directory: " + filepath.Join(dir, "src") + "]"}, nil},
		{"read @nope.go", []string{"[@nope.go does not exist in the workspace — not attached]"}, []string{"@nope.go does not exist; it was not attached"}},
		{"read @/etc/passwd", []string{"[@/etc/passwd is outside the workspace — not attached]"}, []string{"@/etc/passwd is outside the workspace; it was not attached"}},
		{"mail bob@main.go or ping @here", nil, nil},
		{"see [@main.go](file://" + dir + "/main.go)", nil, nil},
		{"already\n[attached file: " + filepath.Join(dir, "main.go") + "]\n@main.go", nil, nil},
	} {
		lines, notes := tools.Mentions(context.Background(), e, tt.prompt)
		if strings.Join(lines, "\n") != strings.Join(tt.lines, "\n") || strings.Join(notes, "\n") != strings.Join(tt.notes, "\n") {
			t.Errorf("%q:\nlines %q\nwant  %q\nnotes %q\nwant  %q", tt.prompt, lines, tt.lines, notes, tt.notes)
		}
	}
	// A new file the editor holds only as an unsaved buffer is attached:
	// the file view has it, the disk does not.
	buf := filepath.Join(dir, "draft.md")
	lines, notes := tools.Mentions(context.Background(), bufferEnv{env: e, path: buf}, "tidy @draft.md")
	if strings.Join(lines, "") != "[attached file: "+buf+"]" || len(notes) != 0 {
		t.Errorf("unsaved buffer: lines %q, notes %q", lines, notes)
	}
}

// bufferEnv is an editor's file view holding one unsaved new file.
type bufferEnv struct {
	env
	path string
}

func (b bufferEnv) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if p == b.path {
		return []byte("# draft\n"), nil
	}
	return b.env.ReadFile(ctx, p)
}
