package decide_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// A skill router proposes a skill only when the decision model is sure
// enough; anything else leaves the prompt alone and says why.
func TestRouterSkill(t *testing.T) {
	low := 0.5
	tests := []struct {
		name      string
		d         llmtest.DecisionAnswer
		threshold *float64
		chosen    string
		info      string
	}{
		{"sure", choice("release-notes", 0.9, 0.85), nil, "release-notes", "🧭 skill release-notes (0.85)"},
		{"below the default 0.6", choice("run-tests", 0.9, 0.55), nil, "", "🧭 no skill routed: run-tests at 0.55 is below minConfidence 0.60"},
		{"below a lower threshold is enough", choice("run-tests", 0.9, 0.55), &low, "run-tests", "🧭 skill run-tests (0.55)"},
		{"none applies", choice("none", 0.97, 0.95), nil, "", "🧭 no skill applies (0.95)"},
		{"server error", llmtest.DecisionAnswer{Status: 500, Body: `{"error":{"message":"boom"}}`}, nil, "", "🧭 skill routing skipped: the decision server at "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &decide.Router{Client: &decide.Client{BaseURL: server(t, tt.d).URL()}, Threshold: tt.threshold}
			chosen, info := r.Skill(context.Background(), "write the release notes", skillOpts)
			if chosen != tt.chosen || !strings.HasPrefix(info, tt.info) {
				t.Errorf("Skill = %q, %q; want %q, %q…", chosen, info, tt.chosen, tt.info)
			}
		})
	}
	t.Run("no skills: no question", func(t *testing.T) {
		srv := server(t)
		r := &decide.Router{Client: &decide.Client{BaseURL: srv.URL()}}
		if chosen, info := r.Skill(context.Background(), "hi", nil); chosen != "" || info != "" || len(srv.DecisionRequests()) != 0 {
			t.Errorf("Skill without skills = %q, %q after %d requests", chosen, info, len(srv.DecisionRequests()))
		}
	})
	t.Run("the caller's cancel is not a failure to tell", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := &decide.Router{Client: &decide.Client{BaseURL: server(t, choice("run-tests", 0.9, 0.9)).URL()}}
		if chosen, info := r.Skill(ctx, "hi", skillOpts); chosen != "" || info != "" {
			t.Errorf("Skill after cancel = %q, %q", chosen, info)
		}
	})
}

// A tool router hides only the groups clearly not needed, and only groups
// of tools actually offered; any failure offers every tool.
func TestRouterTools(t *testing.T) {
	noul := func(ps map[string]float64) llmtest.DecisionAnswer {
		a := map[string]any{}
		for g, p := range ps {
			a[g] = map[string]any{"type": "noul", "noul": p}
		}
		return llmtest.DecisionAnswer{Answers: a}
	}
	never := 0.0
	offered := []string{"bash", "read_file", "edit_file", "fetch_content", "read_skill"}
	tests := []struct {
		name      string
		d         llmtest.DecisionAnswer
		threshold *float64
		hide      []string
		info      string
	}{
		{"web clearly unneeded", noul(map[string]float64{"shell": 0.9, "files": 0.8, "web": 0.05}), nil, []string{"fetch_content"}, "🧭 tools not offered this turn: web (0.05) — below dropBelow 0.20"},
		{"all needed", noul(map[string]float64{"shell": 0.9, "files": 0.8, "web": 0.3}), nil, nil, ""},
		{"dropBelow 0 drops nothing", noul(map[string]float64{"shell": 0.0, "files": 0.0, "web": 0.0}), &never, nil, ""},
		{"two groups", noul(map[string]float64{"shell": 0.1, "files": 0.01, "web": 0.9}), nil, []string{"bash", "read_file", "edit_file"}, "🧭 tools not offered this turn: shell (0.10), files (0.01)"},
		{"server error", llmtest.DecisionAnswer{Status: 500, Body: `{"error":{"message":"boom"}}`}, nil, nil, "🧭 tool routing skipped: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t, tt.d)
			r := &decide.Router{Client: &decide.Client{BaseURL: srv.URL()}, Threshold: tt.threshold}
			hide, info := r.Tools(context.Background(), "run the tests", offered)
			if !slices.Equal(hide, tt.hide) || !strings.HasPrefix(info, tt.info) || (tt.info == "") != (info == "") {
				t.Errorf("Tools = %v, %q; want %v, %q…", hide, info, tt.hide, tt.info)
			}
			// Only the groups of offered tools are asked about.
			if qs := srv.DecisionRequests()[0].Questions; len(qs) != 3 || qs["code"] != nil || qs["plan"] != nil {
				t.Errorf("asked about %d groups: %v", len(qs), qs)
			}
		})
	}
	t.Run("no grouped tool offered: no question", func(t *testing.T) {
		srv := server(t)
		r := &decide.Router{Client: &decide.Client{BaseURL: srv.URL()}}
		if hide, info := r.Tools(context.Background(), "hi", []string{"read_skill", "ask_historian"}); hide != nil || info != "" || len(srv.DecisionRequests()) != 0 {
			t.Errorf("Tools = %v, %q after %d requests", hide, info, len(srv.DecisionRequests()))
		}
	})
}

// A decision agent asked in a chat front end answers one line per
// question, in id order, then the server's JSON.
func TestAgentAnswer(t *testing.T) {
	srv := server(t, llmtest.DecisionAnswer{Answers: map[string]any{
		"team":   map[string]any{"type": "choice", "choice": "billing", "probabilities": map[string]any{"billing": 0.8, "tech": 0.2}},
		"urgent": map[string]any{"type": "noul", "noul": 0.25},
	}})
	a := &decide.Agent{Client: &decide.Client{BaseURL: srv.URL()}, Source: "triage.yaml", Questions: map[string]decide.Question{
		"urgent": {Type: decide.Noul, Criteria: map[string]string{"true": "urgent", "false": "can wait"}},
		"team":   {Type: decide.Choice, Criteria: map[string]string{"billing": "refunds", "tech": ""}},
	}}
	got := a.Answer(context.Background(), "  I was charged twice\n")
	if !strings.HasPrefix(got, "team: billing (0.80)\nurgent: 0.25\n\n```json\n{") || !strings.HasSuffix(got, "}\n```\n") {
		t.Errorf("Answer:\n%s", got)
	}
	if st := string(srv.DecisionRequests()[0].State); st != `"I was charged twice"` {
		t.Errorf("state sent %s, want the prompt trimmed", st)
	}
	none := &decide.Agent{Source: "router.yaml"}
	if got := none.Answer(context.Background(), "hi"); !strings.Contains(got, "router.yaml has no questions") {
		t.Errorf("Answer without questions: %q", got)
	}
}
