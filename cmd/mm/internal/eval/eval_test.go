package eval

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/skills"
)

// TestEvalPercentile: nearest rank, so p95 of a few cases is an observed
// latency, never an interpolation; the input is left unsorted.
func TestEvalPercentile(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		p    int
		want float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 95, 7},
		{[]float64{30, 10, 20}, 50, 20},
		{[]float64{30, 10, 20}, 95, 30},
		{[]float64{4, 1, 3, 2}, 50, 2},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 95, 19},
		{[]float64{5, 1}, 0, 1},
	} {
		in := append([]float64(nil), tc.xs...)
		if got := percentile(tc.xs, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %d) = %v, want %v", tc.xs, tc.p, got, tc.want)
		}
		for i := range in {
			if in[i] != tc.xs[i] {
				t.Errorf("percentile sorted its input: %v", tc.xs)
			}
		}
	}
}

// TestEvalConfusions: the most frequent confusion first, ties by name, so
// two runs print the same line.
func TestEvalConfusions(t *testing.T) {
	got := confusions(map[[2]string]int{
		{"run-tests", "-"}:          1,
		{"background-jobs", "none"}: 1,
		{"none", "review-diff"}:     3,
	})
	want := []confusion{{"none", "review-diff", 3}, {"background-jobs", "none", 1}, {"run-tests", "-", 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if confusions(nil) != nil {
		t.Errorf("no pair gives no row")
	}
}

// TestEvalPrintRouting: the table a user reads — one line per case with
// its mark, the totals, the confusion pairs, the latency.
func TestEvalPrintRouting(t *testing.T) {
	var b bytes.Buffer
	printRouting(&b, RoutingReport{
		Router: "http://router/v1", MinConfidence: 0.6,
		Cases: []routeResult{
			{routeCase: routeCase{Prompt: "write the release notes", Skill: "release-notes"}, Got: "release-notes", Sure: 0.85, Outcome: "hit", Ms: 12},
			{routeCase: routeCase{Prompt: strings.Repeat("long prompt ", 10), Skill: "run-tests"}, Outcome: "error", Error: "no answer"},
		},
		Counts:    map[string]int{"hit": 1, "error": 1},
		Accuracy:  0.5,
		Confusion: []confusion{{"run-tests", "-", 1}},
		P50Ms:     12, P95Ms: 40,
	})
	out := b.String()
	testenv.WantIn(t, "the table", out,
		"routing eval: 2 cases through http://router/v1, minConfidence 0.60\n",
		"✓ hit    release-notes    release-notes 0.85         12 ms  write the release notes\n",
		"✗ error  run-tests        error: no answer",
		"long prompt long prompt long prompt long prompt long prompt…\n",
		"hit 1 · wrong 0 · miss 0 · extra 0 · error 1 — 50 % right\n",
		"confusion: run-tests → - ×1\n",
		"latency p50 12 ms · p95 40 ms\n",
	)
}

// TestEvalPrintTools: each case's dropped groups and probabilities in the
// groups' order, then what a cache-minded reader needs: wrong drops and
// how often the tool list changed.
func TestEvalPrintTools(t *testing.T) {
	var b bytes.Buffer
	printTools(&b, ToolsReport{
		Router: "http://router/v1", DropBelow: 0.2,
		Cases: []toolCaseResult{
			{toolCase: toolCase{Prompt: "fix the test", Need: []string{"edit"}}, Needed: map[string]float64{"web": 0.05, "edit": 0.9}, Dropped: []string{"web"}, Outcome: "ok", Ms: 8},
			{toolCase: toolCase{Prompt: "fetch the page"}, Dropped: []string{}, Outcome: "error", Error: "timeout"},
		},
		WrongDrops: 0, Errors: 1, Dropped: 1, Unneeded: 3, ListChanges: 1, P50Ms: 8, P95Ms: 9,
	}, []string{"edit", "web"})
	out := b.String()
	testenv.WantIn(t, "the table", out,
		"tool-routing eval: 2 cases through http://router/v1, dropBelow 0.20\n",
		"✓ ok         dropped web          edit 0.90 web 0.05     8 ms  fix the test\n",
		"✗ error      dropped -            error: timeout",
		"wrong drops 0 · errors 1 · dropped 1 of 3 unneeded groups · tool list changed 1 times in 2 turns\n",
		"latency p50 8 ms · p95 9 ms\n",
	)
}

// TestEvalLastLine: a failed check is reported by its last non-empty
// output line, cut; with no output, by the error.
func TestEvalLastLine(t *testing.T) {
	err := errors.New("exit status 1")
	for _, tc := range []struct{ out, want string }{
		{"ok\nFAIL: TestX\n\n", "FAIL: TestX"},
		{"", "exit status 1"},
		{"  \n", "exit status 1"},
		{strings.Repeat("x", 200), strings.Repeat("x", 119) + "…"},
	} {
		if got := lastLine(tc.out, err); got != tc.want {
			t.Errorf("lastLine(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

// TestEvalRunUsage: a wrong command line, an unreadable case file, a bad
// case set or a missing router is one line and exit 2, before anything
// runs (the Host's funcs are nil: calling one would panic).
func TestEvalRunUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no kind", nil, Usage},
		{"unknown kind", []string{"speed"}, Usage},
		{"too many", []string{"routing", "a.yaml", "b.yaml"}, Usage},
		{"missing file", []string{"tools", "/nonexistent/cases.yaml"}, "cannot read the cases"},
		{"no skill router", []string{"routing"}, "set skillRouting: {agent: router.yaml} in /x/agent.yaml"},
		{"no tool router", []string{"tools", "--json"}, "set toolRouting: {agent: router.yaml} in /x/agent.yaml"},
		{"tasks not a list", []string{"tasks", writeCases(t, "name: x\n")}, "not a YAML list"},
		{"tasks empty", []string{"tasks", writeCases(t, "[]\n")}, "the list is empty"},
		{"task without check", []string{"tasks", writeCases(t, "- name: x\n  prompt: y\n")}, "task 1 needs a name, a prompt and a check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), Host{ConfigSource: "/x/agent.yaml"}, t.TempDir(), tc.args, false, &stdout, &stderr)
			if code != exitcode.Usage || !strings.Contains(stderr.String(), tc.want) || stdout.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit 2 and %q", code, stderr.String(), stdout.String(), tc.want)
			}
			if n := strings.Count(stderr.String(), "\n"); n != 1 {
				t.Errorf("%d lines on stderr, want one", n)
			}
		})
	}
}

// TestEvalCasesChecked: a case naming a skill or a tool group that does
// not exist is refused before the router is asked (a typo would
// otherwise score as a router error), and a task's file may not leave
// its temp directory.
func TestEvalCasesChecked(t *testing.T) {
	h := Host{
		ConfigSource: "/x/agent.yaml",
		SkillRouter:  &decide.Router{},
		ToolRouter:   &decide.Router{},
		Skills:       func(string) (*skills.Set, decide.Options) { return nil, nil },
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown skill", []string{"routing", writeCases(t, "- {prompt: ship it, skill: deploy}\n")}, exitcode.Usage, `case 1 expects skill "deploy", which is not among the skills`},
		{"none is a skill", []string{"routing", writeCases(t, "- {prompt: hi, skill: none}\n- {prompt: ship it, skill: deploy}\n")}, exitcode.Usage, `case 2 expects skill "deploy"`},
		{"unknown group", []string{"tools", writeCases(t, "- {prompt: hi, need: [telepathy]}\n")}, exitcode.Usage, `case 1 needs group "telepathy", which is not a tool group`},
		{"file outside", []string{"tasks", writeCases(t, "- {name: t, prompt: p, check: 'true', files: {../escape.go: x}}\n")}, exitcode.Failed, `task t: file "../escape.go" is outside its directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), h, t.TempDir(), tc.args, false, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), tc.code, tc.want)
			}
		})
	}
}

// TestEvalBuiltinCases: the embedded case sets parse, so mm eval without
// a file never fails on its own cases.
func TestEvalBuiltinCases(t *testing.T) {
	for name, data := range map[string][]byte{"routing": builtinRouting, "tools": builtinTools, "tasks": builtinTasks} {
		if len(data) == 0 {
			t.Errorf("%s: empty", name)
		}
	}
	var tasks []evalTask
	if err := yaml.Unmarshal(builtinTasks, &tasks); err != nil || len(tasks) == 0 {
		t.Fatalf("tasks: %v", err)
	}
	for _, tk := range tasks {
		if tk.Name == "" || tk.Prompt == "" || tk.Check == "" {
			t.Errorf("task %+v lacks a name, a prompt or a check", tk)
		}
	}
}

func writeCases(t *testing.T, text string) string {
	t.Helper()
	p := t.TempDir() + "/cases.yaml"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
