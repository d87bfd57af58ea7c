package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// TestSteering: what the user sends while a turn runs reaches the model
// before its next call — after the running tool's result, or after an
// answer that would have ended the turn, which then goes on — and the
// turn ends once; once it ended, Put refuses.
func TestSteering(t *testing.T) {
	for _, tc := range []struct {
		name string
		// when the message is sent: at the first event of this type
		at func(engine.Event) bool
		// the messages of the second request, from its end
		wantTail []string
	}{
		{"during a tool call", func(e engine.Event) bool { _, ok := e.(engine.ToolStarted); return ok },
			[]string{"tool: echo: a", "user: use b instead"}},
		{"while the final answer streams", func(e engine.Event) bool { x, ok := e.(engine.Text); return ok && strings.Contains(x.Text, "done") },
			[]string{"assistant: done", "user: use b instead"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var steps []llmtest.Step
			if strings.HasPrefix(tc.name, "during") {
				steps = append(steps, llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"a"}`)}})
			} else {
				steps = append(steps, llmtest.Step{Content: "done"})
			}
			steps = append(steps, llmtest.Step{Content: "now with b"})
			s, srv := newSession(t, script(steps...), nil)
			in := &engine.Inbox{}
			var rec recorder
			sent := false
			end := s.RunSteered(context.Background(), "use a", in, func(e engine.Event) {
				rec.emit(e)
				if !sent && tc.at(e) {
					sent = in.Put("use b instead")
					if !sent {
						t.Error("Put refused while the turn runs")
					}
				}
			})
			if end.Reason != engine.EndTurn {
				t.Fatalf("end = %+v", end)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			msgs := reqs[1].Messages
			var tail []string
			for _, m := range msgs[len(msgs)-len(tc.wantTail):] {
				tail = append(tail, m.Role+": "+m.Content)
			}
			if strings.Join(tail, "\n") != strings.Join(tc.wantTail, "\n") {
				t.Errorf("the second request ends with\n%s\nwant\n%s", strings.Join(tail, "\n"), strings.Join(tc.wantTail, "\n"))
			}
			ends, steered := 0, 0
			for _, e := range rec.events {
				switch e := e.(type) {
				case engine.TurnEnd:
					ends++
				case engine.Steered:
					steered++
					if e.Text != "use b instead" || e.Message == "" {
						t.Errorf("steered event = %+v", e)
					}
				}
			}
			if ends != 1 || steered != 1 {
				t.Errorf("%d turn ends and %d steered events, want one each", ends, steered)
			}
			if in.Put("too late") {
				t.Error("Put accepted a message after the turn ended")
			}
			shown := false
			for _, e := range s.Replay() {
				shown = shown || e.Steered && e.Text == "use b instead" && e.Message != ""
			}
			if !shown {
				t.Errorf("the transcript does not show the message: %+v", s.Replay())
			}
		})
	}
}

// TestSteeringDroppedWhenTheTurnFails: a message still waiting when the
// turn fails is not silently lost: the user is told to send it again.
func TestSteeringDroppedWhenTheTurnFails(t *testing.T) {
	s, _ := newSession(t, script(llmtest.Step{HTTPError: &llmtest.HTTPError{Status: 500, Body: `{"error":{"message":"boom"}}`}}), nil)
	in := &engine.Inbox{}
	in.Put("wait, not that")
	var rec recorder
	// The message joins before the first call; the one put after it
	// never reaches a model call.
	end := s.RunSteered(context.Background(), "go", in, func(e engine.Event) {
		rec.emit(e)
		if _, ok := e.(engine.Steered); ok {
			in.Put("and this one")
		}
	})
	if end.Reason != engine.Failed {
		t.Fatalf("end = %+v", end)
	}
	found := false
	for _, st := range rec.struggles() {
		found = found || st.Kind == engine.KindSteer && strings.Contains(st.Text, "and this one")
	}
	if !found {
		t.Errorf("no note about the message the model never read: %+v", rec.struggles())
	}
}
