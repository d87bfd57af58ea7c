package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/fakellm"
)

// needs is a decision model's answer to the tool-routing questions: P(the
// group is needed), by group.
func needs(p map[string]float64) fakellm.Decision {
	answers := map[string]any{}
	for g, v := range p {
		answers[g] = map[string]any{"type": "noul", "noul": v}
	}
	return fakellm.Decision{Answers: answers}
}

func offeredTools(r fakellm.Recorded) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestACPToolRouting (E35, issue 13): over ACP, with toolRouting pointing
// at a decision agent, a tool group is dropped from the chat request only
// below dropBelow; a doubt keeps it; any failure (no route, a malformed
// answer, a call past the timeout) offers every tool and says so in one
// 🧭 line, and the turn does not wait past the timeout.
func TestACPToolRouting(t *testing.T) {
	all := []string{"bash", "edit_file", "plan", "read_file", "read_skill", "write_file"}
	sure := map[string]float64{"shell": 0.9, "files": 0.95, "web": 0.5, "code": 0.5, "plan": 0.5}
	with := func(over map[string]float64) map[string]float64 {
		m := map[string]float64{}
		for k, v := range sure {
			m[k] = v
		}
		for k, v := range over {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name      string
		decisions []fakellm.Decision
		offered   []string
		note      string // "" : no 🧭 line
	}{
		{"drops the useless", []fakellm.Decision{needs(with(map[string]float64{"shell": 0.15, "plan": 0.03}))},
			[]string{"edit_file", "read_file", "read_skill", "write_file"}, "🧭 tools not offered this turn: shell (0.15), plan (0.03) — below dropBelow 0.20"},
		{"a doubt keeps", []fakellm.Decision{needs(with(map[string]float64{"plan": 0.31, "shell": 0.2}))}, all, ""},
		{"route missing", nil, all, "🧭 tool routing skipped: the server at %s has no /v1/systemone route (404)"},
		{"malformed", []fakellm.Decision{{Status: 200, Body: `{"answers": {"shell": {"type": "noul", "noul": 3}}}`}}, all, "🧭 tool routing skipped: "},
		{"answer missing", []fakellm.Decision{needs(map[string]float64{"shell": 0.01})}, all, "has no answer for question"},
		{"too slow", []fakellm.Decision{{Delay: hung}}, all, "🧭 tool routing skipped: the decision model at %s did not answer within 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chat := scenario(t, "short_answer")
			dec := fakellm.NewServer(fakellm.Scenario{Decisions: tt.decisions})
			defer dec.Close()
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, ".mm", "tools-router.yaml"), "baseURL: "+dec.URL()+"\nmodel: d1-3b\ndecision: {}\n")
			writeFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "toolRouting: {agent: tools-router.yaml, timeout: 300ms}\n")
			p := startAgent(t, dir, mmEnv(t, chat))
			ctx := testContext(t)
			id := p.session(t, ctx, dir)
			start := time.Now()
			resp, err := p.prompt(ctx, id, "summarise README.md in two lines")
			took := time.Since(start)
			if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
				t.Fatalf("prompt: %+v, %v", resp, err)
			}
			// lsp is offered where a language server is installed; its group
			// (code) is answered 0.5 and kept.
			got := offeredTools(chat.Requests()[0])
			lsp := slices.Contains(got, "lsp")
			got = slices.DeleteFunc(got, func(n string) bool { return n == "lsp" })
			if !slices.Equal(got, tt.offered) {
				t.Errorf("the chat model was offered %v, want %v", got, tt.offered)
			}
			updates, _ := p.client.snapshot()
			th := thoughtText(updates)
			note := strings.Replace(tt.note, "%s", dec.URL(), 1)
			switch {
			case note == "" && strings.Contains(th, "🧭"):
				t.Errorf("a 🧭 line where nothing was dropped:\n%s", th)
			case note != "" && (strings.Count(th, "🧭") != 1 || !strings.Contains(th, note)):
				t.Errorf("want one 🧭 line with %q, the thoughts were:\n%s", note, th)
			case strings.Contains(note, "skipped") && !strings.Contains(th, "— all tools offered"):
				t.Errorf("a failed routing does not say every tool is offered:\n%s", th)
			}
			if tt.decisions != nil {
				reqs := dec.DecisionRequests()
				if len(reqs) != 1 {
					t.Fatalf("decision requests = %d, want 1", len(reqs))
				}
				var ids []string
				for id, q := range reqs[0].Questions {
					var qq struct{ Type string }
					json.Unmarshal(q, &qq)
					if qq.Type != "noul" {
						t.Errorf("question %s is a %s, want noul", id, qq.Type)
					}
					ids = append(ids, id)
				}
				slices.Sort(ids)
				// web has no tool here (fetch_content is off): not asked.
				want := []string{"files", "plan", "shell"}
				if lsp {
					want = []string{"code", "files", "plan", "shell"}
				}
				if !slices.Equal(ids, want) {
					t.Errorf("questions %v, want one per group with a tool: %v", ids, want)
				}
			}
			if took > hung/2 {
				t.Errorf("the turn took %v: it waited for the decision model", took)
			}
		})
	}
}
