package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/cmd/mm/internal/eval"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

func route(choice string, p, conf float64) llmtest.DecisionAnswer {
	other := "none"
	if choice == "none" {
		other = "run-tests"
	}
	return llmtest.DecisionAnswer{Answers: map[string]any{"route": map[string]any{"type": "choice", "choice": choice,
		"probabilities": map[string]any{choice: p, other: 1 - p}, "confidence": conf}}}
}

// TestEvalRouting: mm eval's routing eval runs its cases through the
// configured router and reports hits, misses, extras, errors, the
// confusion pairs and latency, as a table and as JSON.
func TestEvalRouting(t *testing.T) {
	t.Parallel()
	for _, jsonOut := range []bool{false, true} {
		dec := llmtest.NewServer(llmtest.Scenario{Decisions: []llmtest.DecisionAnswer{
			route("release-notes", 0.9, 0.85),  // hit
			route("background-jobs", 0.6, 0.3), // below 0.6: a miss
			route("none", 0.97, 0.95),          // hit
			route("review-diff", 0.9, 0.8),     // extra
			{Body: `{"answers":{}}`},           // malformed: an error
		}})
		dir := t.TempDir()
		testenv.WriteFile(t, filepath.Join(dir, ".mm", "router.yaml"), "baseURL: "+dec.URL()+"\ndecision: {}\n")
		testenv.WriteFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "skillRouting: {agent: router.yaml}\n")
		args := []string{"eval", "routing", filepath.Join("testdata", "eval", "routing.yaml")}
		if jsonOut {
			args = append(args, "--json")
		}
		abs, _ := filepath.Abs(args[2])
		args[2] = abs
		stdout, stderr, code := runInProcess(t, dir, trusted(t, dir, mmEnv(t, nil)), "", args...)
		dec.Close()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !jsonOut {
			testenv.WantIn(t, "the table", stdout,
				"routing eval: 5 cases through "+dec.RootURL()+"/v1/systemone, minConfidence 0.60",
				"✗ miss   background-jobs  none 0.30",
				"hit 2 · wrong 0 · miss 1 · extra 1 · error 1 — 40 % right",
				"confusion: background-jobs → none ×1, none → review-diff ×1, run-tests → - ×1",
				"latency p50 ",
			)
			continue
		}
		var rep eval.RoutingReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, stdout)
		}
		if len(rep.Cases) != 5 || rep.Counts["hit"] != 2 || rep.Accuracy != 0.4 || rep.Cases[4].Outcome != "error" || !strings.Contains(rep.Cases[4].Error, `no answer for question "route"`) {
			t.Errorf("report: %+v", rep)
		}
	}
}

// TestEvalRoutingNeedsRouter: without skillRouting, one line, exit 2.
func TestEvalRoutingNeedsRouter(t *testing.T) {
	t.Parallel()
	_, stderr, code := runInProcess(t, t.TempDir(), mmEnv(t, nil), "", "eval", "routing")
	if code != 2 || !strings.Contains(stderr, "set skillRouting") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}

// TestEvalTasks: mm eval's tasks: each runs in its own directory against
// the chat model and is verified by its command; the fake is scripted to
// do one task and not the other, so the report has both.
func TestEvalTasks(t *testing.T) {
	t.Parallel()
	for _, jsonOut := range []bool{false, true} {
		srv := scenario(t, "eval_tasks")
		tasks, _ := filepath.Abs(filepath.Join("testdata", "eval", "tasks.yaml"))
		args := []string{"eval", "tasks", tasks}
		if jsonOut {
			args = append(args, "--json")
		}
		stdout, stderr, code := runInProcess(t, t.TempDir(), mmEnv(t, srv), "", args...)
		if code != 1 {
			t.Errorf("exit %d, want 1 (a task failed); stderr: %s", code, stderr)
		}
		if !jsonOut {
			testenv.WantIn(t, "the table", stdout, "✓ pass write-file-from-spec", " 2 turns", "✗ fail add-struct-field", "— check failed", "1 of 2 tasks passed (model fake-model)")
			continue
		}
		var rep eval.TasksReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, stdout)
		}
		if rep.Passed != 1 || rep.Total != 2 || !rep.Tasks[0].Pass || rep.Tasks[1].Pass || rep.Tasks[0].Turns != 2 || rep.Tasks[0].Prompt == 0 || rep.Tasks[1].StopReason != "end_turn" {
			t.Errorf("report: %+v", rep)
		}
	}
}
