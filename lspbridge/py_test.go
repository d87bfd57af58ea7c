package lspbridge

import (
	"context"
	"path/filepath"
	"testing"
)

func TestPythonTypeError(t *testing.T) {
	need(t, "pyright-langserver")
	dir := fixture(t, "py/typeerr")
	m := newTestManager(t, dir)
	got := edit(t, m, filepath.Join(dir, "calc.py"), "return n * 2", `return "twice"`)
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"pyright: this edit introduced 1 error:", `calc.py:2:12: Type "Literal['twice']" is not assignable to return type "int"`}, []string{"already there", "fixed"})
}

func TestPythonPreexisting(t *testing.T) {
	need(t, "pyright-langserver")
	dir := fixture(t, "py/preexisting")
	m := newTestManager(t, dir)
	got := edit(t, m, filepath.Join(dir, "broken.py"), "def two() -> int:", "# two is broken on purpose.\ndef two() -> int:")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"no new errors", "3 problems were already there (not from this edit)"}, []string{"broken.py:", "fixed", "introduced"})
}

func TestPythonFix(t *testing.T) {
	need(t, "pyright-langserver")
	dir := fixture(t, "py/fix")
	m := newTestManager(t, dir)
	got := edit(t, m, filepath.Join(dir, "fix.py"), "n / TWOO", "n / TWO")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"no problems", "fixed: 1"}, []string{"already there", "introduced"})
}

// TestPythonCrossFileOpen: pyright reports only open files, so a file that
// breaks another is reported once that other file is open (mm opened it
// for an earlier edit or query).
func TestPythonCrossFileOpen(t *testing.T) {
	need(t, "pyright-langserver")
	dir := fixture(t, "py/crossmod")
	m := newTestManager(t, dir)
	if list, note, err := m.Diagnostics(context.Background(), filepath.Join(dir, "use.py")); err != nil || len(list) != 0 || note != "" {
		t.Fatalf("use.py before: %v %q %v", list, note, err)
	}
	got := edit(t, m, filepath.Join(dir, "scale.py"), "def scale(n: int) -> int:", "def scale(n: int) -> str:")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"introduced 2 errors:", "scale.py:2:12:", "use.py:3:13: Type \"str\" is not assignable to declared type \"int\""}, nil)
}
