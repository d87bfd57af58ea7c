package lspbridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wantAll fails unless got contains every piece, and none of the absent.
func wantAll(t *testing.T, got string, present []string, absent []string) {
	t.Helper()
	for _, p := range present {
		if !strings.Contains(got, p) {
			t.Errorf("missing %q in:\n%s", p, got)
		}
	}
	for _, a := range absent {
		if strings.Contains(got, a) {
			t.Errorf("unexpected %q in:\n%s", a, got)
		}
	}
}

// TestEditReports: what the language server says of an edit, against
// what was there before it — gopls and pyright alike. A case that waits
// for the file's first analysis (analysed) edits a file whose problems
// must be known before the edit.
func TestEditReports(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, fixture, file, old, new string
		analysed                      bool
		present, absent               []string
	}{
		{"GoTypeError", "go/typeerr", "main.go", "return n * 2", `return "twice"`, false,
			[]string{"gopls: this edit introduced 1 error:", `main.go:6:9: cannot use "twice"`}, []string{"already there", "fixed"}},
		{"GoCrossPackage", "go/crosspkg", "a/a.go", "func Scale(n int) int {", "func Scale(n, m int) int {", false,
			[]string{"introduced 1 error:", "b/b.go:8:18: not enough arguments in call to a.Scale"}, []string{"a/a.go:"}},
		{"GoPreexisting", "go/preexisting", "broken.go", "// Two returns two.", "// Two returns two.\n// It is broken on purpose.", false,
			[]string{"gopls: no new errors", "3 problems were already there (not from this edit)"}, []string{"broken.go:", "fixed", "introduced"}},
		{"GoFix", "go/fix", "fix.go", "n / twoo", "n / two", false,
			[]string{"gopls: no problems", "fixed: 1"}, []string{"already there", "introduced"}},
		{"PythonTypeError", "py/typeerr", "calc.py", "return n * 2", `return "twice"`, false,
			[]string{"pyright: this edit introduced 1 error (calc.py; no other file imports it):", `calc.py:2:12: Type "Literal['twice']" is not assignable to return type "int"`}, []string{"already there", "fixed"}},
		{"PythonPreexisting", "py/preexisting", "broken.py", "def two() -> int:", "# two is broken on purpose.\ndef two() -> int:", true,
			[]string{"no new errors", "3 problems were already there (not from this edit)"}, []string{"broken.py:", "fixed", "introduced"}},
		{"PythonFix", "py/fix", "fix.py", "n / TWOO", "n / TWO", true,
			[]string{"no problems", "fixed: 1"}, []string{"already there", "introduced"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir, m := served(t, c.fixture)
			path := filepath.Join(dir, filepath.FromSlash(c.file))
			if c.analysed {
				analysed(t, m, path)
			}
			got := edit(t, m, path, c.old, c.new)
			t.Logf("after edit:\n%s", got)
			wantAll(t, got, c.present, c.absent)
		})
	}
}

// TestGoNewFile: a file created by the edit has no "before"; its errors
// are new.
func TestGoNewFile(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "go/typeerr")
	path := filepath.Join(dir, "extra.go")
	ctx := context.Background()
	snap := m.Before(ctx, path)
	content := []byte("package main\n\nfunc triple(n int) int {\n\treturn double(n) + \"n\"\n}\n")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	got := m.After(ctx, snap, content)
	t.Logf("after write:\n%s", got)
	wantAll(t, got, []string{"introduced 1 error:", "extra.go:4:9:"}, []string{"already there"})
}
