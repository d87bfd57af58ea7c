package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/skills"
)

// toolResult is one tool_result line of `mm --json`.
type toolResult struct {
	Type    string `json:"type"`
	Name    string `json:"name"`
	Input   json.RawMessage
	Output  string `json:"output"`
	IsError bool   `json:"is_error"`
}

// TestShippedSkillsFollowed: the shipped skills are written for small
// models, and one is followed to the end. Each shipped skill has a
// scenario (testdata/shipped/NAME.yaml) in which a scripted model invokes
// it with /NAME, loads it with read_skill, and follows it to the end with
// the real tools in a real workspace. The bash commands it runs are the
// skill's own (placeholders filled), so a skill edited without its
// scenario fails here.
func TestShippedSkillsFollowed(t *testing.T) {
	t.Parallel()
	shipped, _ := skills.Load(skills.Shipped())
	port := freePort(t)
	name := fmt.Sprintf("skilltest-%d", os.Getpid())
	cases := []struct {
		skill, params string
		vars          map[string]string // placeholders of the skill's commands
		setup         func(t *testing.T, dir string)
		check         func(t *testing.T, dir string, res []toolResult)
		needs         string       // a program that must be on PATH
		fails         map[int]bool // calls that fail on purpose (the failing test, the error to explain)
		// slow are calls that may fail only with this text: a language
		// server still loading a cold workspace on a loaded machine.
		slow map[int]string
	}{
		{skill: "run-tests", needs: "go", fails: map[int]bool{1: true},
			setup: func(t *testing.T, dir string) {
				testenv.WriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/add\n\ngo 1.21\n")
				testenv.WriteFile(t, filepath.Join(dir, "add.go"), "package add\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
				testenv.WriteFile(t, filepath.Join(dir, "add_test.go"), "package add\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n")
			},
			check: func(t *testing.T, dir string, res []toolResult) {
				if !strings.Contains(res[1].Output, "FAIL") || !strings.Contains(res[4].Output, "ok") {
					t.Errorf("first run %q, second run %q", res[1].Output, res[4].Output)
				}
				if out, err := goCmd(dir, "test", "./..."); err != nil {
					t.Errorf("the tests still fail after the skill:\n%s", out)
				}
			}},
		{skill: "background-jobs", params: "python3 -m http.server", needs: "curl",
			vars: map[string]string{"CMD": "python3 -m http.server PORT --bind 127.0.0.1", "NAME": name, "PORT": port},
			check: func(t *testing.T, dir string, res []toolResult) {
				pidFile := "/tmp/mm-" + name + ".pid"
				defer os.Remove(pidFile)
				defer os.Remove("/tmp/mm-" + name + ".log")
				if !strings.Contains(res[2].Output, "running") || !strings.Contains(res[3].Output, "Directory listing") || !strings.Contains(res[4].Output, "stopped") {
					t.Errorf("running %q / curl %q / stop %q", res[2].Output, res[3].Output, res[4].Output)
				}
				b, _ := os.ReadFile(pidFile)
				var pid int
				fmt.Sscan(string(b), &pid)
				if pid <= 0 {
					t.Fatalf("no pid in %s", pidFile)
				}
				if alive(pid) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("the server %d still runs after the skill's stop step", pid)
				}
			}},
		{skill: "rename-symbol", params: "Hello Greet", needs: "gopls", slow: map[int]string{1: "did not answer in time"},
			setup: func(t *testing.T, dir string) {
				testenv.WriteFile(t, filepath.Join(dir, "go.mod"), "module example.com/greet\n\ngo 1.21\n")
				testenv.WriteFile(t, filepath.Join(dir, "greet.go"), "package main\n\n// Hello greets.\nfunc Hello() string { return \"hello\" }\n")
				testenv.WriteFile(t, filepath.Join(dir, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(Hello()) }\n")
			},
			check: func(t *testing.T, dir string, res []toolResult) {
				for _, f := range []string{"greet.go", "main.go"} {
					b, _ := os.ReadFile(filepath.Join(dir, f))
					if strings.Contains(string(b), "Hello") || !strings.Contains(string(b), "Greet") {
						t.Errorf("%s after the rename:\n%s", f, b)
					}
				}
				if out, err := goCmd(dir, "build", "./..."); err != nil {
					t.Errorf("does not build after the rename:\n%s", out)
				}
			}},
		{skill: "review-diff", needs: "git",
			setup: func(t *testing.T, dir string) {
				gitRepo(t, dir, map[string]string{"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n"}, "first")
				testenv.WriteFile(t, filepath.Join(dir, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"DEBUG\")\n\tfmt.Println(\"hi\")\n}\n")
			},
			check: func(t *testing.T, dir string, res []toolResult) {
				if !strings.Contains(res[1].Output, "main.go") || !strings.Contains(res[2].Output, `+	fmt.Println("DEBUG")`) {
					t.Errorf("status %q diff %q", res[1].Output, res[2].Output)
				}
				if out := gitOut(t, dir, "status", "--short"); out != " M main.go\n" {
					t.Errorf("the review changed the tree: %q", out)
				}
			}},
		{skill: "commit-message", needs: "git",
			setup: func(t *testing.T, dir string) {
				gitRepo(t, dir, map[string]string{"greet.go": "package greet\n"}, "greet: first")
				testenv.WriteFile(t, filepath.Join(dir, "greet.go"), "package greet\n\nconst Bye = \"goodbye\"\n")
				git(t, dir, "add", "greet.go")
			},
			check: func(t *testing.T, dir string, res []toolResult) {
				if !strings.Contains(res[1].Output, "greet.go") || !strings.Contains(res[2].Output, "goodbye") || !strings.Contains(res[3].Output, "greet: first") {
					t.Errorf("stat %q diff %q log %q", res[1].Output, res[2].Output, res[3].Output)
				}
				if n := strings.Count(gitOut(t, dir, "log", "--oneline"), "\n"); n != 1 {
					t.Errorf("%d commits: the skill must not commit", n)
				}
			}},
		{skill: "release-notes", params: "v1.2", needs: "git", vars: map[string]string{"LAST": "v1.1"},
			setup: func(t *testing.T, dir string) {
				gitRepo(t, dir, map[string]string{"a.txt": "a\n"}, "old feature")
				git(t, dir, "tag", "v1.1")
				for i, msg := range []string{"farewell message", "fix greeting typo"} {
					testenv.WriteFile(t, filepath.Join(dir, "a.txt"), strings.Repeat("a\n", i+2))
					git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", msg)
				}
			},
			check: func(t *testing.T, dir string, res []toolResult) {
				if !strings.HasPrefix(res[1].Output, "v1.1\n") || !strings.Contains(res[2].Output, "farewell message") || strings.Contains(res[2].Output, "old feature") {
					t.Errorf("tag %q log %q", res[1].Output, res[2].Output)
				}
			}},
		{skill: "explain-error", params: "ZeroDivisionError: division by zero (calc.py line 2)", needs: "python3", fails: map[int]bool{2: true},
			setup: func(t *testing.T, dir string) {
				testenv.WriteFile(t, filepath.Join(dir, "calc.py"), "def mean(xs):\n    return sum(xs) / len(xs)\n\nprint(mean([]))\n")
			},
			check: func(t *testing.T, dir string, res []toolResult) {
				if !strings.Contains(res[1].Output, "len(xs)") || !strings.Contains(res[2].Output, "ZeroDivisionError") {
					t.Errorf("read %q run %q", res[1].Output, res[2].Output)
				}
			}},
	}
	if len(cases) != len(shipped.All()) {
		t.Fatalf("%d scenarios for %d shipped skills", len(cases), len(shipped.All()))
	}
	for _, c := range cases {
		t.Run(c.skill, func(t *testing.T) {
			// Each skill has its own directory and server. The go and gopls
			// ones hold a language server's slot: gopls analyses the
			// workspace, and beside too much else it misses its deadline
			// on a small machine.
			t.Parallel()
			if c.needs == "go" || c.needs == "gopls" {
				testenv.NeedLanguageServer(t, c.needs)
			} else {
				testenv.NeedTool(t, c.needs)
			}
			sk, ok := shipped.Lookup(c.skill)
			if !ok {
				t.Fatalf("no shipped skill %s", c.skill)
			}
			text, err := os.ReadFile(filepath.Join("testdata", "shipped", c.skill+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			script := strings.NewReplacer("{{PORT}}", port, "{{NAME}}", name).Replace(string(text))
			sc, err := llmtest.Parse([]byte(script))
			if err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewServer(sc)
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			if c.setup != nil {
				c.setup(t, dir)
			}
			prompt := "/" + c.skill
			if c.params != "" {
				prompt += " " + c.params
			}
			env := mmEnv(t, srv)
			stdout, stderr, code := runInProcess(t, dir, env, "", "--json", "--yes", "-p", prompt)
			if code != 0 {
				t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != len(sc.Steps) || srv.Remaining() != 0 {
				t.Fatalf("%d requests for %d steps: the model did not reach the end", len(reqs), len(sc.Steps))
			}
			first := reqs[0].Messages
			if u := first[len(first)-1].Content; !strings.HasSuffix(u, skills.Line(c.skill, c.params)) {
				t.Errorf("the model got %q", u)
			}
			var res []toolResult
			var calls []toolResult
			sc2 := bufio.NewScanner(strings.NewReader(stdout))
			sc2.Buffer(nil, 1<<20)
			for sc2.Scan() {
				var r toolResult
				if json.Unmarshal(sc2.Bytes(), &r) != nil {
					continue
				}
				switch r.Type {
				case "tool_result":
					res = append(res, r)
				case "tool_call":
					calls = append(calls, r)
				}
			}
			if len(res) != len(sc.Steps)-1 {
				t.Fatalf("%d tool results for %d tool steps:\n%s", len(res), len(sc.Steps)-1, stdout)
			}
			if !strings.Contains(res[0].Output, sk.Body[:60]) {
				t.Errorf("read_skill gave %q, not the shipped body", res[0].Output)
			}
			body := sk.Body
			for _, k := range []string{"CMD", "NAME", "PORT", "LAST"} {
				if v, ok := c.vars[k]; ok {
					body = strings.ReplaceAll(body, k, v)
				}
			}
			for i, r := range res {
				if why, ok := c.slow[i]; ok && r.IsError && strings.Contains(r.Output, why) {
					t.Logf("call %d: %s (tolerated: the effect is checked below)", i, r.Output)
					continue
				}
				if r.IsError != c.fails[i] {
					t.Errorf("call %d (%s) failed %v, want %v: %s", i, calls[i].Input, r.IsError, c.fails[i], r.Output)
				}
				var in struct{ Command string }
				if json.Unmarshal(calls[i].Input, &in); calls[i].Name == "bash" && c.skill != "explain-error" && !strings.Contains(body, in.Command) {
					t.Errorf("bash %q is not a command of the skill", in.Command)
				}
			}
			c.check(t, dir, res)
		})
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

func goCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func gitRepo(t *testing.T, dir string, files map[string]string, msg string) {
	t.Helper()
	git(t, dir, "init", "-q")
	for name, text := range files {
		testenv.WriteFile(t, filepath.Join(dir, name), text)
		git(t, dir, "add", name)
	}
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", msg)
}

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
