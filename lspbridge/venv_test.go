package lspbridge

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
)

// plantVenv puts in dir a .venv whose bin/python is a script of the
// repository that records each run in the returned file and then runs
// the real Python, and whose site-packages holds a package, vendored.
func plantVenv(t *testing.T, dir string) string {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "ran")
	py := filepath.Join(dir, ".venv", "bin", "python")
	if err := mkfile(py); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(py, []byte("#!/bin/sh\necho ran >> "+marker+"\nexec python3 \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(py, 0o755); err != nil { // mkfile made it 0644
		t.Fatal(err)
	}
	pkg := filepath.Join(dir, ".venv", "lib", "python3.12", "site-packages", "vendored", "__init__.py")
	if err := mkfile(pkg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pkg, []byte("def triple(n: int) -> int:\n    return n * 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return marker
}

// A repository's own .venv/bin/python is a program the repository chose:
// pyright runs the interpreter it is given, so it must not be given one
// that is a file of the workspace until the user trusts the workspace.
// The venv's packages are still found: pyright reads its site-packages.
// Trusted, the interpreter is run (this one is a script that runs the
// system's Python, so pyright then knows only the system's packages).
func TestWorkspaceVenvScriptIsNotRun(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "pyright-langserver")
	testenv.NeedTool(t, "python3")
	for _, trusted := range []bool{false, true} {
		dir := fixture(t, "py/typeerr")
		marker := plantVenv(t, dir)
		m := newTestManagerWith(t, dir, func(c *Config) {
			if trusted {
				c.VenvRoots = []string{dir}
			}
		})
		got := edit(t, m, filepath.Join(dir, "calc.py"), "return n * 2", "from vendored import triple\n    return triple(n)")
		t.Logf("trusted %v, after edit:\n%s", trusted, got)
		if !trusted {
			wantAll(t, got, []string{"no problems"}, []string{"vendored", "error"})
		}
		if _, err := os.Stat(marker); (err == nil) != trusted {
			t.Errorf("trusted %v: the repository's .venv/bin/python ran: %v", trusted, err == nil)
		}
	}
}

// TestVenvTrustIsPerRoot: in a session of two roots, trusting one lets
// only its own servers run its venv's interpreter; the other root's
// interpreters are never run — not by its own servers, nor by the
// trusted root's through a link into it.
func TestVenvTrustIsPerRoot(t *testing.T) {
	t.Parallel()
	trusted, other := canonical(t.TempDir()), canonical(t.TempDir())
	m := New(Config{BaseDir: trusted, VenvRoots: []string{trusted}})
	m.workspace, m.roots = trusted, []string{trusted, other}
	for _, tc := range []struct {
		server        string // the server's root
		want, notWant []string
	}{
		{trusted, []string{other}, []string{trusted}},
		{filepath.Join(trusted, "svc"), []string{other}, []string{trusted, filepath.Join(trusted, "svc")}},
		{other, []string{other}, []string{trusted}},
		{filepath.Join(other, "pkg"), []string{filepath.Join(other, "pkg"), other}, []string{trusted}},
	} {
		got := m.confine(tc.server)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("server of %s: %s not confined (%v)", tc.server, w, got)
			}
		}
		for _, w := range tc.notWant {
			if slices.Contains(got, w) {
				t.Errorf("server of %s: the trusted %s confined (%v)", tc.server, w, got)
			}
		}
	}
	if r := m.rootOf(filepath.Join(other, "a", "b.py")); r != other {
		t.Errorf("a file of the second root is served from %s", r)
	}
}
