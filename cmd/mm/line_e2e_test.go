package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/internal/testenv"
)

// runInProcess runs `mm args…` in dir inside the test process, through
// the same run that main calls, with env as its whole environment: no
// binary started, so it is fast and runs in parallel. For what only a
// process shows (exit by signal, a terminal, stdout as a file
// descriptor), use runMM or a testdata/script file.
func runInProcess(t *testing.T, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(testenv.Context(t), environment{vars: config.Env(env), dir: dir}, args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// runMM runs the mm binary with args in dir and returns stdout, stderr
// and the exit code. Tests use runInProcess unless a process is what they
// test: main's secret hiding (a re-exec) or the process's own stderr.
func runMM(t *testing.T, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(mmBin(t), args...)
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

func TestLineModeJSON(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "line_answer")
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "hello.txt"), "hello world\n")
	stdout, stderr, code := runInProcess(t, dir, mmEnv(t, srv), "", "-p", "What does hello.txt say?", "--json")
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
	testenv.WantIn(t, "events", got, "thought", "tool_call", "tool_result", "text", "usage", "turn_end")
	if types[len(types)-1] != "turn_end" {
		t.Errorf("last event = %q", types[len(types)-1])
	}
}

// TestLineModeStruggles: struggles are one plain line each on a
// non-terminal stderr, events with --json, and a stuck turn exits 1.
func TestLineModeStruggles(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "loop_stuck")
	stdout, stderr, code := runInProcess(t, t.TempDir(), mmEnv(t, srv), "", "-p", "show missing.txt", "--yes")
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
	stdout, _, _ = runInProcess(t, t.TempDir(), mmEnv(t, srv), "", "-p", "show missing.txt", "--yes", "--json")
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

// TestLineModePlan: line mode shows the plan (the model's todo list) as a
// compact list.
func TestLineModePlan(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "plan")
	_, stderr, code := runInProcess(t, t.TempDir(), mmEnv(t, srv), "", "-p", "fix the loop")
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
// user's lines (here the server says no window: mm's warning about it
// goes to the log, not to stderr as a raw level=WARN line).
func TestLineModeLogsStayOffTheTerminal(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "short_answer")
	state := t.TempDir()
	var env []string
	for _, kv := range mmEnv(t, srv, "XDG_STATE_HOME="+state, "MM_PROVIDER=openai") {
		if !strings.HasPrefix(kv, "MM_LOG=") {
			env = append(env, kv)
		}
	}
	// The binary: what is tested is a real process's stderr, where a
	// default logger would write.
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

var update = flag.Bool("update", false, "rewrite the golden files")

// seconds is a command's duration in a bash result, which varies.
var seconds = regexp.MustCompile(`· [0-9.]+s\]`)

// TestLineModeJSONGolden pins the --json shape scripts depend on (README,
// "mm -p --json"): lower-case keys, empty fields left out, locations and
// diffs as objects of lower-case fields. Token counts follow the prompt's
// size and commands' durations vary, so they are written as "<n>" and
// "<t>"; the workspace is $WORK.
// Rewrite with: go test ./cmd/mm -run TestLineModeJSONGolden -update
func TestLineModeJSONGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ scenario, prompt string }{
		{"read_edit_answer", "Change hello to goodbye"}, // thoughts, calls, diffs, usage, end
		{"loop_stuck", "show missing.txt"},              // failed calls, struggles, a failed turn
		{"plan", "fix the loop"},                        // a plan
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			srv := scenario(t, tc.scenario)
			dir := t.TempDir()
			testenv.WriteFile(t, filepath.Join(dir, "hello.txt"), "hello world\nsecond line\n")
			// A configured window: the probed one may come after the first
			// usage event, which would then have no size.
			cfg := filepath.Join(t.TempDir(), "agent.yaml")
			testenv.WriteFile(t, cfg, "contextWindow: 32768\n")
			stdout, stderr, code := runInProcess(t, dir, mmEnv(t, srv), "", "-c", cfg, "-p", tc.prompt, "--json", "--yes")
			if code > 1 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var got strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
				var ev map[string]any
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("non-JSON line %q", line)
				}
				checkKeys(t, ev, line)
				for _, k := range []string{"used", "size", "prompt", "completion", "cached"} {
					if _, ok := ev[k]; ok {
						ev[k] = "<n>"
					}
				}
				var b strings.Builder
				enc := json.NewEncoder(&b) // sorted keys
				enc.SetEscapeHTML(false)
				enc.Encode(ev)
				got.WriteString(seconds.ReplaceAllString(strings.ReplaceAll(b.String(), dir, "$WORK"), "· <t>s]"))
			}
			golden := filepath.Join("testdata", "json", tc.scenario+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("--json output changed (rerun with -update if intended, and update README):\n got:\n%s\nwant:\n%s", got.String(), want)
			}
		})
	}
}

// checkKeys fails on a key that is not lower case or a value that is
// empty (null, "", false, 0, [] or {}) anywhere in an event.
func checkKeys(t *testing.T, v any, line string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k != strings.ToLower(k) {
				t.Errorf("key %q is not lower case in %s", k, line)
			}
			if x == nil || x == "" || x == false || x == 0.0 || (isEmpty(x)) {
				if k != "input" { // the model's own arguments are passed as they came
					t.Errorf("empty field %q in %s", k, line)
				}
			}
			if k != "input" {
				checkKeys(t, x, line)
			}
		}
	case []any:
		for _, x := range v {
			checkKeys(t, x, line)
		}
	}
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

// TestLineModeEditSlipRepaired: a model copies read_file's numbered listing
// into old and new; the built binary applies the edit on the first try
// (the numbers are the file's real lines) and the tool result the model
// reads next names the repair and what to send instead.
func TestLineModeEditSlipRepaired(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "slip_edit")
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.go")
	testenv.WriteFile(t, file, "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello world\")\n}\n")
	stdout, stderr, code := runInProcess(t, dir, mmEnv(t, srv), "", "-p", "Say bye instead of hello world", "--yes")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if stdout != "Changed the greeting.\n" {
		t.Errorf("stdout = %q", stdout)
	}
	want := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"bye world\")\n}\n"
	if got := readFile(t, file); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	// the listing the model copied is mm's own read_file output
	read := reqs[1].Messages[len(reqs[1].Messages)-1]
	if !strings.Contains(read.Content, "6\t\tfmt.Println(\"hello world\")\n7\t}") {
		t.Errorf("read_file listing = %q", read.Content)
	}
	res := reqs[2].Messages[len(reqs[2].Messages)-1]
	if res.Role != "tool" || !strings.Contains(res.Content, "1 edit applied after removing line-number prefixes from old and new — send the file's text without them") {
		t.Errorf("the tool result the model reads lacks the repair line: %q", res.Content)
	}
	if strings.Contains(res.Content, "[error") {
		t.Errorf("the tool result is a refusal: %q", res.Content)
	}
}
