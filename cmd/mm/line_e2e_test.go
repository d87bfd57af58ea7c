package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// runMM runs `mm args…` in dir and returns stdout, stderr and the exit code.
func runMM(t *testing.T, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(mmBinary, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestLineModeAnswer(t *testing.T) {
	srv := scenario(t, "line_answer")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hello.txt"), "hello world\n")
	stdout, stderr, code := runMM(t, dir, mmEnv(t, srv), "", "-p", "What does hello.txt say?")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if stdout != "The file says hello world.\n" {
		t.Errorf("stdout = %q, want only the answer", stdout)
	}
	for _, want := range []string{"Let me look at the file.", "Read hello.txt", "end_turn"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "\x1b[") {
		t.Errorf("colour codes on a non-terminal stderr:\n%q", stderr)
	}
}

func TestLineModePromptFromStdin(t *testing.T) {
	srv := scenario(t, "short_answer")
	stdout, _, code := runMM(t, t.TempDir(), mmEnv(t, srv), "say ok\n", "-p", "-")
	if code != 0 || stdout != "ok\n" {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
	if got := srv.Requests()[0].Messages; !strings.Contains(got[len(got)-1].Content, "say ok") {
		t.Errorf("prompt not read from stdin: %+v", got)
	}
}

func TestLineModeJSON(t *testing.T) {
	srv := scenario(t, "line_answer")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hello.txt"), "hello world\n")
	stdout, stderr, code := runMM(t, dir, mmEnv(t, srv), "", "-p", "What does hello.txt say?", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var types []string
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("--json printed a non-JSON line: %q", sc.Text())
		}
		types = append(types, ev["type"].(string))
	}
	got := strings.Join(types, " ")
	for _, want := range []string{"thought", "tool_call", "tool_result", "text", "usage", "turn_end"} {
		if !strings.Contains(got, want) {
			t.Errorf("events %q lack %q", got, want)
		}
	}
	if types[len(types)-1] != "turn_end" {
		t.Errorf("last event = %q", types[len(types)-1])
	}
}

func TestLineModeServerFailsMidTurn(t *testing.T) {
	srv := scenario(t, "server_fails_mid_turn")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hello.txt"), "hello world\n")
	stdout, stderr, code := runMM(t, dir, mmEnv(t, srv), "", "-p", "What does hello.txt say?")
	if code != 1 {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if strings.Contains(stdout, "{") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("a dump instead of one line:\nstdout %q\nstderr %q", stdout, stderr)
	}
	if !strings.Contains(stderr, "out of memory") {
		t.Errorf("stderr does not say what the server said:\n%s", stderr)
	}
}

func TestLineModeNoServer(t *testing.T) {
	// A port nothing listens on: connection refused, one line that says
	// how to start a server.
	srv := llmtest.NewServer(llmtest.Scenario{})
	url := srv.URL()
	srv.Close()
	env := append(mmEnv(t, nil), "MM_BASE_URL="+url)
	_, stderr, code := runMM(t, t.TempDir(), env, "", "-p", "hi")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.Contains(stderr, "llama-server") {
		t.Errorf("stderr does not say how to start a server:\n%s", stderr)
	}
}

func TestLineModeConfigError(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.yaml")
	writeFile(t, cfg, "model: x\nmaxTurn: 3\n")
	stdout, stderr, code := runMM(t, dir, mmEnv(t, nil), "", "-c", cfg, "-p", "hi")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	if stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, `line 2: unknown key "maxTurn"`) {
		t.Errorf("want one line naming the key and line:\nstdout %q\nstderr %q", stdout, stderr)
	}
	// The same file found through MM_CONFIG.
	_, stderr, code = runMM(t, dir, mmEnv(t, nil, "MM_CONFIG="+cfg), "", "-p", "hi")
	if code != 2 || !strings.Contains(stderr, "maxTurn") {
		t.Errorf("MM_CONFIG: exit %d, stderr %q", code, stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"-p", "a", "b"}, {"--no-such-flag"}} {
		_, stderr, code := runMM(t, t.TempDir(), mmEnv(t, nil), "", args...)
		if code != 2 || stderr == "" {
			t.Errorf("mm %v: exit %d, stderr %q", args, code, stderr)
		}
	}
	if _, err := os.Stat(mmBinary); err != nil {
		t.Fatal(err)
	}
}

// TestLineModeStruggles (issue 4): struggles are one plain line each on a
// non-terminal stderr, events with --json, and a stuck turn exits 1.
func TestLineModeStruggles(t *testing.T) {
	srv := scenario(t, "loop_stuck")
	stdout, stderr, code := runMM(t, t.TempDir(), mmEnv(t, srv), "", "-p", "show missing.txt", "--yes")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if stdout != "" {
		t.Errorf("stdout = %q, want no answer", stdout)
	}
	if !strings.Contains(stderr, "mm: ⚠ loop: bash ×3") || !strings.Contains(stderr, "mm: ✖ stuck:") || strings.Contains(stderr, "\x1b[") {
		t.Errorf("stderr:\n%s", stderr)
	}

	srv = scenario(t, "loop_stuck")
	stdout, _, _ = runMM(t, t.TempDir(), mmEnv(t, srv), "", "-p", "show missing.txt", "--yes", "--json")
	var levels []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("non-JSON line %q", line)
		}
		if ev["type"] == "struggle" {
			levels = append(levels, ev["level"].(string)+" "+ev["kind"].(string))
		}
	}
	if strings.Join(levels, ", ") != "warning loop, warning loop, warning loop, severe stuck" {
		t.Errorf("struggle events = %v", levels)
	}
}

// TestLineModePlan (T8): line mode shows the plan as a compact list.
func TestLineModePlan(t *testing.T) {
	srv := scenario(t, "plan")
	_, stderr, code := runMM(t, t.TempDir(), mmEnv(t, srv), "", "-p", "fix the loop")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	want := "plan:\n  [x] read main.go\n  [>] fix the loop\n  [ ] run the tests\n"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks the plan %q:\n%s", want, stderr)
	}
}

// TestLineModeLogsStayOffTheTerminal: without --log or MM_LOG, line mode
// writes its log to mm.log in the state directory, never between the
// user's lines (a server that says no window used to print a raw
// level=WARN line there).
func TestLineModeLogsStayOffTheTerminal(t *testing.T) {
	srv := scenario(t, "short_answer")
	state := t.TempDir()
	var env []string
	for _, kv := range mmEnv(t, srv, "XDG_STATE_HOME="+state, "MM_PROVIDER=openai") {
		if !strings.HasPrefix(kv, "MM_LOG=") {
			env = append(env, kv)
		}
	}
	_, stderr, code := runMM(t, t.TempDir(), env, "", "-p", "say ok")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if strings.Contains(stderr, "level=") || strings.Contains(stderr, "%!") {
		t.Errorf("a log line reached the terminal:\n%s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(state, "mm", "mm.log"))
	if err != nil || !strings.Contains(string(b), "level=INFO") {
		t.Errorf("mm.log in the state directory = %q, %v", b, err)
	}
}
