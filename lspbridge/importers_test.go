package lspbridge

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPyImportsAny(t *testing.T) {
	const root = "/w"
	tests := []struct {
		name, file, edited, src string
		want                    bool
	}{
		{"from import", "/w/app.py", "/w/greet.py", "from greet import greet\n", true},
		{"plain import", "/w/app.py", "/w/greet.py", "import os, greet as g\n", true},
		{"other module", "/w/app.py", "/w/greet.py", "import greeting\nfrom greetings import greet\n", false},
		{"word in a comment or string", "/w/app.py", "/w/greet.py", "# import greet\nx = 'import greet'\n", false},
		{"package submodule by from", "/w/app.py", "/w/pkg/greet.py", "from pkg import greet\n", true},
		{"package submodule dotted", "/w/app.py", "/w/pkg/greet.py", "import pkg.greet\n", true},
		{"package only", "/w/app.py", "/w/pkg/greet.py", "import pkg\n", false},
		{"package init", "/w/app.py", "/w/pkg/__init__.py", "from pkg import thing\n", true},
		{"relative sibling", "/w/pkg/app.py", "/w/pkg/greet.py", "from . import greet\n", true},
		{"relative module", "/w/pkg/app.py", "/w/pkg/greet.py", "from .greet import hello\n", true},
		{"relative parent", "/w/pkg/sub/app.py", "/w/pkg/greet.py", "from ..greet import hello\n", true},
		{"relative elsewhere", "/w/pkg/app.py", "/w/lib/greet.py", "from .other import greet\n", false},
		{"src layout", "/w/tests/test_a.py", "/w/src/pkg/greet.py", "from pkg.greet import hello\n", true},
		{"parenthesized", "/w/app.py", "/w/pkg/greet.py", "from pkg import (\n    other,\n    greet,\n)\n", true},
		{"backslash", "/w/app.py", "/w/pkg/greet.py", "from pkg import other, \\\n    greet\n", true},
		{"indented in a function", "/w/app.py", "/w/greet.py", "def f():\n    import greet\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pyImportsAny(root, tt.file, []byte(tt.src), [][]string{pyModule(root, tt.edited)})
			if got != tt.want {
				t.Errorf("%s imports %s: %v, want %v (names %q)", tt.file, tt.edited, got, tt.want, pyImportedNames([]byte(tt.src)))
			}
		})
	}
}

func TestMentionsImport(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{`import { greet } from "./greet";`, true},
		{`const g = require("../lib/greet")`, true},
		{`import { greeting } from "./greeting";`, false},
		{`const greet = 1`, false},
	}
	for _, tt := range tests {
		if got := mentionsImport([]byte(tt.src), []string{"greet"}); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.src, got, tt.want)
		}
	}
}

func TestDistance(t *testing.T) {
	edited := []string{filepath.FromSlash("/w/pkg/greet.py")}
	for p, want := range map[string]int{"/w/pkg/app.py": 0, "/w/pkg/sub/a.py": 1, "/w/app.py": 1, "/w/other/x/a.py": 3} {
		if got := distance(edited, filepath.FromSlash(p)); got != want {
			t.Errorf("distance to %s: %d, want %d", p, got, want)
		}
	}
}

// TestFindImporters: the scan finds the importers, nearest first, bounded,
// and sees a file that stopped importing the module (the cache follows
// the file).
func TestFindImporters(t *testing.T) {
	t.Parallel()
	dir := fixture(t, "py/greet")
	manyImporters(t, dir, 30)
	s := &server{lang: "python", root: dir, cfg: ServerConfig{Extensions: []string{".py"}}}
	greet := filepath.Join(dir, "greet.py")
	sc := s.findImporters(context.Background(), []string{greet})
	if sc.found != 32 || len(sc.files) != maxImporters || sc.truncated {
		t.Fatalf("found %d, kept %d, truncated %v; want 32, %d, false", sc.found, len(sc.files), sc.truncated, maxImporters)
	}
	if got := []string{relTo(dir, sc.files[0]), relTo(dir, sc.files[1])}; !slices.Equal(got, []string{"app.py", "other.py"}) {
		t.Errorf("nearest first: %v, want app.py and other.py", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.py"), []byte("MESSAGE = 'no import any more'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc = s.findImporters(context.Background(), []string{greet})
	if sc.found != 31 || slices.Contains(sc.files, filepath.Join(dir, "app.py")) {
		t.Errorf("after app.py dropped its import: found %d, files %v", sc.found, sc.files)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if sc := s.findImporters(ctx, []string{greet}); !sc.cut || sc.truncated {
		t.Errorf("a scan cut short by ctx: cut %v, truncated %v; want true, false", sc.cut, sc.truncated)
	}
}
