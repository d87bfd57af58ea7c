package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

func toolNames(r llmtest.Recorded) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Name)
	}
	return out
}

// A tool the tool router hides is not offered for that turn only, it is
// asked once per turn about the rewritten prompt, and a name that is no
// tool of the session changes nothing.
func TestToolRouterHidesForOneTurn(t *testing.T) {
	var asked []string
	s, srv := newSession(t, script(
		llmtest.Step{Content: "first answer"},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"x"}`)}},
		llmtest.Step{Content: "second answer"},
	), func(o *engine.Options) {
		o.Rewrite = func(_ context.Context, p string) engine.Rewrite { return engine.Rewrite{Prompt: p + " (rewritten)"} }
		o.ToolRouter = func(_ context.Context, p string) engine.ToolRoute {
			asked = append(asked, p)
			if len(asked) == 1 {
				return engine.ToolRoute{Hide: []string{"boom", "no_such_tool"}, Info: "🧭 boom dropped"}
			}
			return engine.ToolRoute{}
		}
	})
	var r recorder
	ctx := context.Background()
	s.Run(ctx, "one", r.emit)
	s.Run(ctx, "two", r.emit)
	reqs := srv.Requests()
	if got := toolNames(reqs[0]); !slices.Equal(got, []string{"echo"}) {
		t.Errorf("turn 1 offered %v, want [echo]", got)
	}
	for _, rq := range reqs[1:] {
		if got := toolNames(rq); !slices.Equal(got, []string{"boom", "echo"}) {
			t.Errorf("turn 2 offered %v, want both tools back", got)
		}
	}
	if !slices.Equal(asked, []string{"one (rewritten)", "two (rewritten)"}) {
		t.Errorf("router asked %q", asked)
	}
	if !hasProgress(r.events, "🧭 boom dropped") {
		t.Errorf("no 🧭 line among %+v", r.events)
	}
}

// A hidden tool the model calls anyway (it knows it from an earlier turn)
// runs, and is offered again for the rest of the turn: a wrong drop costs
// one cache prefix, never the task.
func TestHiddenToolCalledAnywayRuns(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"still here"}`)}},
		llmtest.Step{Content: "done"},
	), func(o *engine.Options) {
		o.ToolRouter = func(context.Context, string) engine.ToolRoute { return engine.ToolRoute{Hide: []string{"echo"}} }
	})
	var r recorder
	if end := s.Run(context.Background(), "go", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("turn: %+v", end)
	}
	reqs := srv.Requests()
	if got := toolNames(reqs[0]); !slices.Equal(got, []string{"boom"}) {
		t.Errorf("first request offered %v", got)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != "tool" || last.Content != "echo: still here" {
		t.Errorf("the hidden tool's call did not run: %+v", last)
	}
	if got := toolNames(reqs[1]); !slices.Equal(got, []string{"boom", "echo"}) {
		t.Errorf("after the call, offered %v", got)
	}
	if !hasProgress(r.events, "🧭 the model called echo, which tool routing had hidden for this turn — offered again") {
		t.Errorf("no line about the hidden call: %+v", r.events)
	}
}

func hasProgress(evs []engine.Event, text string) bool {
	for _, e := range evs {
		if p, ok := e.(engine.Progress); ok && p.Text == text {
			return true
		}
	}
	return false
}
