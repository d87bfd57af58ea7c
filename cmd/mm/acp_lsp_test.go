package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPEditReportsGoplsError: through the real mm, an edit that
// introduces a type error gets gopls' error in its result, in the same
// model round trip; after mm exits no gopls is left.
func TestACPEditReportsGoplsError(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "gopls")
	w := newWorld(t, "go_type_error")
	w.writeAll(map[string]string{
		"go.mod":  "module example.com/m\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n\nfunc main() { println(add(1, 2)) }\n",
	})
	p := w.start(acptest.Options{})
	p.open()
	p.turn("make add concatenate")
	reqs := w.srv.Requests()
	result := reqs[2].Last().Content
	if !strings.Contains(result, "gopls") || !strings.Contains(result, "main.go:4") || !strings.Contains(strings.ToLower(result), "mismatched types") {
		t.Errorf("the edit's result lacks gopls' error:\n%s", result)
	}
	if tools := reqs[0].Tools; !hasTool(tools, "lsp") {
		t.Errorf("the lsp tool is not offered with gopls on PATH")
	}
	servers := children(p.Cmd.Process.Pid, "gopls")
	if len(servers) == 0 {
		t.Errorf("no gopls child of mm found")
	}
	p.CloseInput()
	p.WaitExit()
	for _, pid := range servers {
		if alive(pid) {
			t.Errorf("gopls (pid %d) outlived mm", pid)
		}
	}
}

func hasTool(ts []llmtest.Tool, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

// children lists the processes whose parent is pid and whose command line
// contains name.
func children(pid int, name string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", n))
		if strings.Contains(string(cmdline), name) {
			out = append(out, n)
		}
	}
	return out
}

// greetProject is a Python project: greet.py, and app.py that imports it.
var greetProject = map[string]string{
	"pyproject.toml": "[project]\nname = \"greet\"\nversion = \"0.1.0\"\n",
	"greet.py":       "def greet(name):\n    return \"hello \" + name\n",
	"app.py":         "from greet import greet\n\nprint(greet(\"bob\"))\n",
}

// TestACPPythonEditReportsImporter: through the real mm, an edit of
// greet.py that breaks app.py's call reports app.py's error though
// pyright reports open files only, and a bash command that fixes it
// reports "fixed".
func TestACPPythonEditReportsImporter(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "pyright-langserver")
	w := newWorld(t, "py_importer_broken")
	w.writeAll(greetProject)
	// An old checkout: the files are not what the command changes.
	old := time.Now().Add(-time.Hour)
	for _, f := range []string{"pyproject.toml", "greet.py", "app.py"} {
		if err := os.Chtimes(filepath.Join(w.dir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}

	w.session().turn("greet should take a count")
	reqs := w.srv.Requests()
	if len(reqs) < 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	last := func(i int) string { return reqs[i].Last().Content }
	t.Logf("edit result:\n%s\nbash result:\n%s", last(2), last(3))
	if got := last(2); !strings.Contains(got, `app.py:3:7: Argument missing for parameter "times"`) || !strings.Contains(got, "1 file that imports it checked") || strings.Contains(got, "no problems") {
		t.Errorf("the edit's result lacks app.py's error:\n%s", got)
	}
	// The command's check has the session's adaptive wait (at least 2 s):
	// on a machine busy with other tests pyright may not answer within it,
	// and the result must then say so rather than claim anything.
	switch got := last(3); {
	case strings.Contains(got, "diagnostics incomplete") && !strings.Contains(got, "no problems") && !strings.Contains(got, "app.py:3:7"):
		t.Logf("pyright did not answer the command's check in time; the result says so")
	case !strings.Contains(got, "fixed: 1") || !strings.Contains(got, "pyright: no problems in greet.py; 1 file that imports it checked"):
		t.Errorf("the command's result does not say the break is fixed:\n%s", got)
	}
}
