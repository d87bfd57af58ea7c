package lspbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestPythonCrossFileOpen: pyright reports only open files, so a file that
// breaks another is reported once that other file is open (mm opened it
// for an earlier edit or query).
func TestPythonCrossFileOpen(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "py/crossmod")
	if list, note, err := m.Diagnostics(context.Background(), filepath.Join(dir, "use.py")); err != nil || len(list) != 0 || note != "" {
		t.Fatalf("use.py before: %v %q %v", list, note, err)
	}
	got := edit(t, m, filepath.Join(dir, "scale.py"), "def scale(n: int) -> int:", "def scale(n: int) -> str:")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"introduced 2 errors (scale.py; 1 file that imports it checked):", "scale.py:2:12:", "use.py:3:13: Type \"str\" is not assignable to declared type \"int\""}, nil)
}

// openDocs lists the documents mm has open in path's server, relative to
// dir.
func openDocs(t testing.TB, m *Manager, dir, path string) []string {
	t.Helper()
	s := m.serverFor(canonical(path), false)
	if s == nil {
		t.Fatalf("no server for %s", path)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p, d := range s.docs {
		if d.gen == s.gen {
			out = append(out, relTo(dir, p))
		}
	}
	slices.Sort(out)
	return out
}

// serverItems asks path's server for path's diagnostics (a pull).
func serverItems(t testing.TB, m *Manager, path string) int {
	t.Helper()
	s := m.serverFor(canonical(path), false)
	p, err := s.ready(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := call(context.Background(), p, "textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": fileURI(canonical(path))}}, &res); err != nil {
		t.Fatal(err)
	}
	return len(res.Items)
}

// TestPythonImporterBroken: pyright reports open files only, yet an edit
// that breaks the modules importing the edited one reports their errors,
// and the importers mm opened for the check are closed again.
func TestPythonImporterBroken(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "py/greet")
	greet := filepath.Join(dir, "greet.py")
	got := edit(t, m, greet, "def greet(name: str) -> str:", "def greet(name: str, times: int) -> str:")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{
		"pyright: this edit introduced 2 errors (greet.py; 2 files that import it checked):",
		`app.py:3:16: Argument missing for parameter "times"`,
		`other.py:3:14: Argument missing for parameter "times"`,
	}, []string{"no problems", "already there", "fixed"})
	if open := openDocs(t, m, dir, greet); !slices.Equal(open, []string{"greet.py"}) {
		t.Errorf("open documents after the check: %v, want only the edited greet.py", open)
	}
	// pyright's side: in openFilesOnly mode it answers a pull for a file
	// it does not have open with nothing, and app.py has an error now.
	if n := serverItems(t, m, filepath.Join(dir, "app.py")); n != 0 {
		t.Errorf("pyright reports %d problems for app.py: it still has it open", n)
	}

	// Fixing the call in app.py: its error is gone, and app.py imports
	// nothing that is not checked.
	got = edit(t, m, filepath.Join(dir, "app.py"), `greet("bob")`, `greet("bob", 2)`)
	t.Logf("after fix:\n%s", got)
	wantAll(t, got, []string{"pyright: no problems in app.py; no other file imports it", "fixed: 1"}, []string{"introduced", "already there"})
}

// TestPythonImporterPreexisting: a problem the importer already had is
// counted, not listed, and an edit that breaks nothing says what it
// checked instead of a bare "no problems".
func TestPythonImporterPreexisting(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "pyright-langserver")
	dir := fixture(t, "py/greet")
	app := filepath.Join(dir, "app.py")
	data, _ := os.ReadFile(app)
	if err := os.WriteFile(app, append(data, "COUNT: int = \"three\"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newTestManager(t, dir)
	greet := filepath.Join(dir, "greet.py")
	got := edit(t, m, greet, `return "hello " + name`, `return "hi " + name`)
	t.Logf("harmless edit:\n%s", got)
	wantAll(t, got, []string{"pyright: no new errors in greet.py; 2 files that import it checked", "1 problem was already there (not from this edit)"}, []string{"app.py:", "introduced", "fixed"})

	got = edit(t, m, greet, "def greet(name: str) -> str:", "def greet(name: str, times: int) -> str:")
	t.Logf("breaking edit:\n%s", got)
	wantAll(t, got, []string{"introduced 2 errors", "app.py:3:16:", "1 problem was already there"}, []string{"app.py:4:"})

	// Undoing the break in greet.py fixes both importers.
	got = edit(t, m, greet, "def greet(name: str, times: int) -> str:", "def greet(name: str, times: int = 1) -> str:")
	t.Logf("fixing edit:\n%s", got)
	wantAll(t, got, []string{"no new errors in greet.py; 2 files that import it checked", "fixed: 2", "1 problem was already there"}, []string{"introduced"})
	if open := openDocs(t, m, dir, greet); !slices.Equal(open, []string{"greet.py"}) {
		t.Errorf("open documents after the checks: %v, want only greet.py", open)
	}
}

// TestPythonManyImporters: a module imported by 200 files checks a
// bounded subset, the nearest, and says so in one line.
func TestPythonManyImporters(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "pyright-langserver")
	dir := fixture(t, "py/greet")
	manyImporters(t, dir, 200)
	m := newTestManager(t, dir)
	greet := filepath.Join(dir, "greet.py")
	got := edit(t, m, greet, "def greet(name: str) -> str:", "def greet(name: str, times: int) -> str:")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{
		"pyright: this edit introduced 20 errors (greet.py; the nearest 20 of 202 files that import it checked, the others not (pyright reports open files only)):",
		"app.py:3:16:", "  … and 10 more in 10 other files",
	}, []string{"incomplete"})
	if n := strings.Count(got, "\n  "); n != 11 {
		t.Errorf("%d lines listed, want the 10 errors and one line for the others", n)
	}
	if open := openDocs(t, m, dir, greet); !slices.Equal(open, []string{"greet.py"}) {
		t.Errorf("open documents after the check: %v, want only greet.py", open)
	}
}

// manyImporters adds n modules importing greet under dir/many.
func manyImporters(t testing.TB, dir string, n int) {
	t.Helper()
	for i := range n {
		p := filepath.Join(dir, "many", fmt.Sprintf("use%03d.py", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "from greet import greet\n\nM%d: str = greet(\"n%d\")\n", i, i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPythonCommandChange: a command (bash) that changes a module mm has
// open is checked like an edit, importers included; one that changes a
// file mm never opened says it was not checked.
func TestPythonCommandChange(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "py/greet")
	ctx := context.Background()
	greet := filepath.Join(dir, "greet.py")
	edit(t, m, greet, `return "hello " + name`, `return "hi " + name`) // mm opens greet.py
	// The fixture was copied just now: date it back, as an old checkout.
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error { return os.Chtimes(p, old, old) })

	start := time.Now()
	replaceIn(t, greet, "def greet(name: str) -> str:", "def greet(name: str, times: int) -> str:")
	got := m.ChangedSince(ctx, start, nil)
	t.Logf("after the command:\n%s", got)
	wantAll(t, got, []string{
		"pyright: this command introduced 2 errors (greet.py; 2 files that import it checked):",
		`app.py:3:16: Argument missing for parameter "times"`,
	}, []string{"no problems"})
	if open := openDocs(t, m, dir, greet); !slices.Equal(open, []string{"greet.py"}) {
		t.Errorf("open documents after the check: %v, want only greet.py", open)
	}

	start = time.Now()
	replaceIn(t, filepath.Join(dir, "other.py"), `greet.greet("alice")`, `greet.greet("alice", 1)`)
	got = m.ChangedSince(ctx, start, nil)
	t.Logf("after a command changing a file mm never opened:\n%s", got)
	wantAll(t, got, []string{"pyright: other.py changed by the command not checked (mm had not opened it and pyright reports open files only"}, []string{"no problems", "fixed"})

	// A later command that changed nothing (past the mtime slack).
	if got := m.ChangedSince(ctx, time.Now().Add(2*mtimeSlack), nil); got != "" {
		t.Errorf("a command that changed nothing: %q", got)
	}
}

// TestPythonRenameChecksImporters: a rename edits every file that uses
// the symbol; the files that import the module without using it are
// checked with them, and closed after.
func TestPythonRenameChecksImporters(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "pyright-langserver")
	dir := fixture(t, "py/greet")
	third := filepath.Join(dir, "third.py")
	if err := os.WriteFile(third, []byte("import greet\n\nNAME: str = greet.__name__\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newTestManager(t, dir)
	ctx := context.Background()
	greet := filepath.Join(dir, "greet.py")
	changes, err := m.Rename(ctx, Position{Path: greet, Symbol: "greet"}, "salute")
	if err != nil {
		t.Fatal(err)
	}
	var edited []string
	for _, c := range changes {
		edited = append(edited, relTo(dir, c.Path))
	}
	if !slices.Equal(edited, []string{"app.py", "greet.py", "other.py"}) {
		t.Fatalf("rename edits %v, want app.py, greet.py, other.py", edited)
	}
	got, err := m.Apply(ctx, changes, func(path string, _, data []byte) error { return writeAtomic(path, data) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after rename:\n%s", got)
	wantAll(t, got, []string{"pyright: no problems in 3 edited files; 1 file that imports them checked"}, []string{"introduced"})
	open := openDocs(t, m, dir, greet)
	if slices.Contains(open, "third.py") {
		t.Errorf("open documents after the rename: %v, third.py was opened for the check only", open)
	}
}
