package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/cmd/mm/internal/eval"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// needs is a decision model's answer to the tool-routing questions: P(the
// group is needed), by group.
func needs(p map[string]float64) llmtest.DecisionAnswer {
	answers := map[string]any{}
	for g, v := range p {
		answers[g] = map[string]any{"type": "noul", "noul": v}
	}
	return llmtest.DecisionAnswer{Answers: answers}
}

func offeredTools(r llmtest.Recorded) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// TestACPToolRouting: over ACP, with toolRouting pointing at a decision
// agent, a tool group is dropped from the chat request only below
// dropBelow; a doubt keeps it; any failure (no route, a malformed answer,
// a call past the timeout) offers every tool and says so in one 🧭 line,
// and the turn does not wait past the timeout.
func TestACPToolRouting(t *testing.T) {
	t.Parallel()
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
		decisions []llmtest.DecisionAnswer
		offered   []string
		note      string // "" : no 🧭 line
	}{
		{"drops the useless", []llmtest.DecisionAnswer{needs(with(map[string]float64{"shell": 0.15, "plan": 0.03}))},
			[]string{"edit_file", "read_file", "read_skill", "write_file"}, "🧭 tools not offered this turn: shell (0.15), plan (0.03) — below dropBelow 0.20"},
		{"a doubt keeps", []llmtest.DecisionAnswer{needs(with(map[string]float64{"plan": 0.31, "shell": 0.2}))}, all, ""},
		{"route missing", nil, all, "🧭 tool routing skipped: the server at %s has no /v1/systemone route (404)"},
		{"malformed", []llmtest.DecisionAnswer{{Status: 200, Body: `{"answers": {"shell": {"type": "noul", "noul": 3}}}`}}, all, "🧭 tool routing skipped: "},
		{"answer missing", []llmtest.DecisionAnswer{needs(map[string]float64{"shell": 0.01})}, all, "has no answer for question"},
		{"too slow", []llmtest.DecisionAnswer{{Delay: hung}}, all, "🧭 tool routing skipped: the decision model at %s did not answer within 2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, dec := decisionWorld(t, tt.decisions, "tools-router.yaml", "toolRouting: {agent: tools-router.yaml, timeout: 2s}\n")
			chat := w.srv
			p := w.session()
			start := time.Now()
			p.endTurn("summarise README.md in two lines")
			took := time.Since(start)
			// lsp is offered where a language server is installed; its group
			// (code) is answered 0.5 and kept.
			got := offeredTools(chat.Requests()[0])
			lsp := slices.Contains(got, "lsp")
			got = slices.DeleteFunc(got, func(n string) bool { return n == "lsp" })
			if !slices.Equal(got, tt.offered) {
				t.Errorf("the chat model was offered %v, want %v", got, tt.offered)
			}
			th := acptest.ThoughtText(p.Updates())
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

// TestEvalTools: mm eval's tool-routing eval asks about every group for
// each case and reports wrong drops (a needed group dropped), errors, the
// groups dropped against the unneeded ones, and how often the offered
// list changed from one case to the next (the prompt-cache cost).
func TestEvalTools(t *testing.T) {
	t.Parallel()
	low := map[string]float64{"shell": 0.9, "files": 0.9, "web": 0.05, "code": 0.4, "plan": 0.5}
	for _, jsonOut := range []bool{false, true} {
		dec := llmtest.NewServer(llmtest.Scenario{Decisions: []llmtest.DecisionAnswer{
			needs(low), // run the tests: web dropped, ok
			needs(low), // summarise: the same list, no change
			needs(map[string]float64{"shell": 0.6, "files": 0.1, "web": 0.05, "code": 0.4, "plan": 0.1}),  // files wrongly dropped
			{Status: 500, Body: `{"error":{"code":500,"message":"model loading","type":"server_error"}}`}, // an error: nothing dropped
		}})
		w := newWorld(t, "").trustedConfig(map[string]string{
			"router.yaml": "baseURL: " + dec.URL() + "\ndecision: {}\n",
			"agent.yaml":  "toolRouting: {agent: router.yaml}\n",
		})
		cases, _ := filepath.Abs(filepath.Join("testdata", "eval", "tools.yaml"))
		args := []string{"eval", "tools", cases}
		if jsonOut {
			args = append(args, "--json")
		}
		stdout, stderr, code := w.line("", args...)
		dec.Close()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if len(dec.DecisionRequests()) != 4 {
			t.Errorf("decision requests = %d, want one per case", len(dec.DecisionRequests()))
		}
		if !jsonOut {
			testenv.WantIn(t, "the table", stdout,
				"tool-routing eval: 4 cases through "+dec.RootURL()+"/v1/systemone, dropBelow 0.20",
				"✓ ok         dropped web          shell 0.90 files 0.90 web 0.05 code 0.40 plan 0.50",
				"✗ wrong-drop dropped files,web,plan",
				"✗ error      dropped -",
				"wrong drops 1 · errors 1 · dropped 5 of 17 unneeded groups · tool list changed 2 times in 4 turns",
				"latency p50 ",
			)
			continue
		}
		var rep eval.ToolsReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, stdout)
		}
		if len(rep.Cases) != 4 || rep.WrongDrops != 1 || rep.Errors != 1 || rep.ListChanges != 2 || rep.Dropped != 5 ||
			!slices.Equal(rep.Cases[2].Dropped, []string{"files", "web", "plan"}) || rep.Cases[2].Needed["files"] != 0.1 {
			t.Errorf("report: %+v", rep)
		}
	}
}

// TestEvalToolsNeedsRouter: without toolRouting, one line, exit 2.
func TestEvalToolsNeedsRouter(t *testing.T) {
	t.Parallel()
	_, stderr, code := runInProcess(t, t.TempDir(), mmEnv(t, nil), "", "eval", "tools")
	if code != 2 || !strings.Contains(stderr, "set toolRouting") {
		t.Errorf("exit %d, %q", code, stderr)
	}
}
