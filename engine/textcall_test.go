package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// TestTextCallServerFixOncePerSession: the user's note names
// the server fix the first time a syntax leaks in a session, not again;
// another syntax gets its own. Calls written back to back all run, in
// order.
func TestTextCallServerFixOncePerSession(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{Content: "<tool_call>{\"name\": \"echo\", \"arguments\": {\"text\": \"a\"}}</tool_call>\n<tool_call>{\"name\": \"echo\", \"arguments\": {\"text\": \"b\"}}</tool_call>", ChunkSize: 4},
		llmtest.Step{Content: "done"},
		llmtest.Step{Content: "<tool_call>{\"name\": \"echo\", \"arguments\": {\"text\": \"c\"}}</tool_call>", ChunkSize: 4},
		llmtest.Step{Content: "done"},
		llmtest.Step{Content: "[TOOL_CALLS]echo[ARGS]{\"text\": \"d\"}", ChunkSize: 4},
		llmtest.Step{Content: "done"},
	), nil)
	var notes []string
	for i := range 3 {
		var r recorder
		if end := s.Run(context.Background(), "go", r.emit); end.Reason != engine.EndTurn {
			t.Fatalf("turn %d: %+v", i, end)
		}
		var got []string
		for _, st := range r.struggles() {
			got = append(got, st.Text)
		}
		notes = append(notes, strings.Join(got, " | "))
		for _, e := range r.events {
			if tx, ok := e.(engine.Text); ok && strings.Contains(tx.Text, "TOOL_CALLS") || ok && strings.Contains(tx.Text, "tool_call>") {
				t.Errorf("turn %d showed the markup: %q", i, tx.Text)
			}
		}
	}
	if !strings.Contains(notes[0], "run as real calls, in order") || !strings.Contains(notes[0], "server fix: llama-server: add --jinja") {
		t.Errorf("first Hermes leak: %q", notes[0])
	}
	if !strings.Contains(notes[1], "text tool call") || strings.Contains(notes[1], "server fix") {
		t.Errorf("second Hermes leak names the fix again: %q", notes[1])
	}
	if !strings.Contains(notes[2], "server fix:") || !strings.Contains(notes[2], "--tool-call-parser mistral") {
		t.Errorf("first Mistral leak: %q", notes[2])
	}
	// The two calls of the first turn ran in order: their results are in
	// the second request, a then b.
	body := string(srv.Requests()[1].Body)
	a, b := strings.Index(body, "echo: a"), strings.Index(body, "echo: b")
	if a < 0 || b < a {
		t.Errorf("results not in order: a at %d, b at %d", a, b)
	}
}

// TestTextCallInsideReasoning: a call written inside <think>,
// with nothing answered after it, is neither run nor dropped: the model
// is told it wrote the call in its reasoning, and answers.
func TestTextCallInsideReasoning(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{Content: "<think>I need the file.\n<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"text\": \"a\"}}\n</tool_call>\n</think>", ChunkSize: 5},
		llmtest.Step{Content: "I will answer in words instead."},
	), nil)
	var r recorder
	if end := s.Run(context.Background(), "go", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("%+v", end)
	}
	for _, e := range r.events {
		if _, ok := e.(engine.ToolStarted); ok {
			t.Fatalf("a call in the reasoning ran")
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "inside your reasoning") {
		t.Fatalf("the model was not told (%d requests)", len(reqs))
	}
}
