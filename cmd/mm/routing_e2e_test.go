package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// routed is a decision model choosing release-notes with this confidence.
func routed(conf float64) llmtest.DecisionAnswer {
	return llmtest.DecisionAnswer{Answers: map[string]any{"route": map[string]any{"type": "choice", "choice": "release-notes",
		"probabilities": map[string]any{"release-notes": 0.9, "none": 0.1}, "confidence": conf}}}
}

// TestACPSkillRouting: over ACP, with skillRouting pointing at a decision
// agent on its own server, the prompt reaches the chat model with the
// skill line at 0.85, without it at 0.4, and unchanged when the route is
// missing or the decision model is too slow, each time with one 🧭 line,
// and the turn does not wait past the timeout.
func TestACPSkillRouting(t *testing.T) {
	t.Parallel()
	const prompt = "please write the release notes for 1.4"
	const line = "[skill: release-notes — load it with read_skill and carry out its steps now"
	tests := []struct {
		name      string
		decisions []llmtest.DecisionAnswer // none: the route does not exist
		skillLine bool
		note      string
	}{
		{"confident", []llmtest.DecisionAnswer{routed(0.85)}, true, "🧭 skill release-notes (0.85)"},
		{"not confident", []llmtest.DecisionAnswer{routed(0.4)}, false, "🧭 no skill routed: release-notes at 0.40 is below minConfidence 0.60"},
		{"route missing", nil, false, "🧭 skill routing skipped: the server at %s has no /v1/systemone route (404)"},
		{"a chat model", []llmtest.DecisionAnswer{{Status: 501, Body: `{"error":{"code":501,"message":"This model is not a decision model","type":"not_supported_error"}}`}}, false, "🧭 skill routing skipped: d1-3b at %s is not a decision model"},
		{"too slow", []llmtest.DecisionAnswer{{Delay: hung}}, false, "🧭 skill routing skipped: the decision model at %s did not answer within 2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dec := decisionWorld(t, tt.decisions, "router.yaml", "skillRouting: {agent: router.yaml, minConfidence: 0.6, timeout: 2s}\n")
			p := w.session()
			start := time.Now()
			p.endTurn(prompt)
			took := time.Since(start)
			sent := w.srv.Requests()[0].Last().Content
			// The first message starts with the workspace context.
			if !strings.Contains(sent, prompt) || !tt.skillLine && !strings.HasSuffix(sent, prompt) {
				t.Errorf("the prompt was changed: %q", sent)
			}
			if got := strings.Contains(sent, line); got != tt.skillLine {
				t.Errorf("skill line in the chat request = %v, want %v:\n%s", got, tt.skillLine, sent)
			}
			note := tt.note
			if strings.Contains(note, "%s") {
				note = strings.Replace(note, "%s", dec.URL(), 1)
			}
			if th := acptest.ThoughtText(p.Updates()); strings.Count(th, "🧭") != 1 || !strings.Contains(th, note) {
				t.Errorf("want one 🧭 line with %q, the thoughts were:\n%s", note, th)
			}
			if tt.decisions != nil && len(dec.DecisionRequests()) != 1 {
				t.Errorf("decision requests = %d, want 1", len(dec.DecisionRequests()))
			}
			// The decision model holds its answer for `hung`; the turn
			// must have gone on long before (the timeout is 2 s).
			if took > hung/2 {
				t.Errorf("the turn took %v: it waited for the decision model", took)
			}
		})
	}
}

// TestACPSkillRoutingNotWhenNamed: a prompt that names a skill itself is
// not routed — the user's choice wins.
func TestACPSkillRoutingNotWhenNamed(t *testing.T) {
	t.Parallel()
	w, dec := decisionWorld(t, []llmtest.DecisionAnswer{routed(0.99)}, "router.yaml", "skillRouting: {agent: router.yaml}\n")
	chat := w.srv
	w.session().turn("$run-tests for the parser")
	if n := len(dec.DecisionRequests()); n != 0 {
		t.Errorf("a prompt naming $run-tests was routed (%d decision requests)", n)
	}
	if sent := chat.Requests()[0].Last().Content; strings.Contains(sent, "release-notes") || !strings.Contains(sent, "[skill: run-tests") {
		t.Errorf("chat request: %q", sent)
	}
}

// decisionWorld is a workspace whose trusted config routes through a
// decision agent, agentFile, served by a fake decision model that gives
// decisions; agentYAML is the agent.yaml that names it. The chat model
// answers short.
func decisionWorld(t *testing.T, decisions []llmtest.DecisionAnswer, agentFile, agentYAML string) (*world, *llmtest.Server) {
	t.Helper()
	dec := llmtest.NewServer(llmtest.Scenario{Decisions: decisions})
	t.Cleanup(dec.Close)
	w := newWorld(t, "short_answer").trustedConfig(map[string]string{
		agentFile:    "baseURL: " + dec.URL() + "\nmodel: d1-3b\ndecision: {}\n",
		"agent.yaml": agentYAML,
	})
	return w, dec
}
