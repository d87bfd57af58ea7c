package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

const routerYAML = `model: d1-3b
decision:
  questions:
    team: {type: choice, instructions: "Which team handles this?", criteria: {billing: refunds and invoices, tech: null}}
    urgency: {type: score, instructions: "How urgent?", criteria: [later, today, now]}
    pii: {type: noul, instructions: "Does it contain personal data?"}
`

var supportAnswer = llmtest.DecisionAnswer{Answers: map[string]any{
	"team":    map[string]any{"type": "choice", "choice": "billing", "probabilities": map[string]any{"billing": 0.9, "tech": 0.1}, "confidence": 0.8},
	"urgency": map[string]any{"type": "score", "score": 1.2, "legend": map[string]any{"0": "later", "1": "today", "2": "now"}, "probabilities": map[string]any{"0": 0.1, "1": 0.6, "2": 0.3}, "confidence": 0.4},
	"pii":     map[string]any{"type": "noul", "noul": 0.03},
}}

// TestLineDecisionAgent: mm -p -c router.yaml (a decision agent) prints
// the server's JSON as is; the state is the prompt alone, with the file's
// questions.
func TestLineDecisionAgent(t *testing.T) {
	t.Parallel()
	dec := llmtest.NewServer(llmtest.Scenario{Decisions: []llmtest.DecisionAnswer{supportAnswer, {Status: 501, Body: `{"error":{"code":501,"message":"This model is not a decision model","type":"not_supported_error"}}`}}})
	defer dec.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "router.yaml")
	testenv.WriteFile(t, cfg, "baseURL: "+dec.URL()+"\n"+routerYAML)
	env := mmEnv(t, nil, "MM_BASE_URL=", "MM_MODEL=") // the file's server and model
	stdout, stderr, code := runInProcess(t, dir, env, "", "-c", cfg, "-p", "I was charged twice for one order")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout is not the one JSON answer: %q", stdout)
	}
	if got["model"] != "d1-3b" || got["answers"].(map[string]any)["team"].(map[string]any)["choice"] != "billing" || got["usage"] == nil {
		t.Errorf("stdout = %s", stdout)
	}
	req := dec.DecisionRequests()[0]
	if string(req.State) != `"I was charged twice for one order"` || len(req.Questions) != 3 {
		t.Errorf("request: %s", req.Body)
	}
	// A chat model behind the file: one line, exit 1.
	stdout, stderr, code = runInProcess(t, dir, env, "", "-c", cfg, "-p", "again")
	if code != 1 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "is not a decision model") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// decision: {} has no questions to ask on its own.
	testenv.WriteFile(t, cfg, "baseURL: "+dec.URL()+"\ndecision: {}\n")
	if _, stderr, code = runInProcess(t, dir, env, "", "-c", cfg, "-p", "x"); code != 2 || !strings.Contains(stderr, "has no questions") {
		t.Errorf("no questions: exit %d, %q", code, stderr)
	}
	// An agent file that is both kinds is refused at start, with its line.
	testenv.WriteFile(t, cfg, "decision: {}\nguard: {risks: [harm]}\n")
	if _, stderr, code = runInProcess(t, dir, env, "", "-c", cfg, "-p", "x"); code != 2 || !strings.Contains(stderr, "line 2: guard: and decision: (line 1)") {
		t.Errorf("both: exit %d, %q", code, stderr)
	}
}

// TestACPDecisionAgent: in an editor, a decision agent answers one
// line per question, then the JSON; nothing reaches a chat model.
func TestACPDecisionAgent(t *testing.T) {
	t.Parallel()
	dec := llmtest.NewServer(llmtest.Scenario{Decisions: []llmtest.DecisionAnswer{supportAnswer}})
	defer dec.Close()
	p := agentWorld(t, "baseURL: "+dec.URL()+"\n"+routerYAML).session()
	p.turn("I was charged twice for one order")
	text := p.answer()
	testenv.WantIn(t, "the answer", text, "pii: 0.03\nteam: billing (0.80)\nurgency: 1.20 today (0.40)\n", "```json\n{\"answers\":")
	if n := len(dec.Requests()); n != 0 {
		t.Errorf("%d chat requests reached the server", n)
	}
}
