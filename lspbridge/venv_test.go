package lspbridge

import (
	"os"
	"path/filepath"
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
		m := newTestManagerWith(t, dir, func(c *Config) { c.RunVenv = trusted })
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
