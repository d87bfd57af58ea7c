package acp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/tools"
)

// TestRenderEveryEvent renders each engine event kind and checks the
// session update on the wire: its discriminator and the fields a client
// reads. The list holds every event type of engine/event.go: add a case
// with each new one.
func TestRenderEveryEvent(t *testing.T) {
	old := "hello\n"
	tests := []struct {
		name  string
		event engine.Event
		want  []string // substrings of the update's JSON; nil: not rendered
	}{
		{"text", engine.Text{Text: "Hi"}, []string{`"sessionUpdate":"agent_message_chunk"`, `"text":"Hi"`}},
		{"thought", engine.Thought{Text: "hmm"}, []string{`"sessionUpdate":"agent_thought_chunk"`, `"text":"hmm"`}},
		{"progress", engine.Progress{Text: "Reading the prompt 1k/2k tokens"}, []string{`"sessionUpdate":"agent_thought_chunk"`, `Reading the prompt 1k/2k tokens\n`}},
		{"struggle", engine.Struggle{Level: engine.Warning, Kind: "loop", Text: "loop: bash ×3"}, []string{`"sessionUpdate":"agent_message_chunk"`, `_mm: `, `loop: bash ×3`}},
		{"tool started", engine.ToolStarted{ID: "call_1", Name: "read_file", Title: "Read a.go", Kind: tools.KindRead,
			Input: json.RawMessage(`{"path":"a.go"}`), Locations: []tools.Location{{Path: "/w/a.go", Line: 3}}},
			[]string{`"sessionUpdate":"tool_call"`, `"toolCallId":"call_1"`, `"title":"Read a.go"`, `"kind":"read"`, `"status":"pending"`, `"rawInput":{"path":"a.go"}`, `"path":"/w/a.go"`, `"line":3`}},
		{"tool started, input not JSON", engine.ToolStarted{ID: "call_2", Name: "bash", Title: "bash", Kind: "weird", Input: json.RawMessage(`{"command":`)},
			[]string{`"kind":"other"`, `"rawInput":"{\"command\":"`}},
		{"tool in progress", engine.ToolUpdated{ID: "call_1", Status: engine.ToolInProgress}, []string{`"sessionUpdate":"tool_call_update"`, `"status":"in_progress"`}},
		{"tool progress", engine.ToolUpdated{ID: "call_1", Progress: "line 1"}, []string{`"sessionUpdate":"tool_call_update"`, `"text":"line 1"`}},
		{"tool finished with a diff", engine.ToolFinished{ID: "call_3", Status: engine.ToolCompleted,
			Result:  tools.Result{Diffs: []tools.Diff{{Path: "/w/a.txt", Old: &old, New: "bye\n"}}, Locations: []tools.Location{{Path: "/w/a.txt"}}},
			Preview: "edited"},
			[]string{`"sessionUpdate":"tool_call_update"`, `"status":"completed"`, `"type":"diff"`, `"oldText":"hello\n"`, `"newText":"bye\n"`, `"text":"edited"`, `"path":"/w/a.txt"`}},
		{"tool failed, new file", engine.ToolFinished{ID: "call_4", Status: engine.ToolFailed,
			Result: tools.Result{Diffs: []tools.Diff{{Path: "/w/new.txt", New: "x"}}}},
			[]string{`"status":"failed"`, `"type":"diff"`, `"newText":"x"`}},
		{"plan", engine.Plan{Entries: []engine.PlanEntry{{Content: "read", Status: "completed"}, {Content: "edit", Status: "pending", Priority: "high"}}},
			[]string{`"sessionUpdate":"plan"`, `"content":"read"`, `"priority":"medium"`, `"priority":"high"`}},
		{"usage", engine.Usage{Used: 1200, Size: 8192}, []string{`"sessionUpdate":"usage_update"`, `"used":1200`, `"size":8192`}},
		{"usage without a window", engine.Usage{Used: 1200}, nil},
		{"turn end", engine.TurnEnd{Reason: engine.EndTurn}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, ok := render(tt.event)
			if ok != (tt.want != nil) {
				t.Fatalf("rendered = %v, want %v", ok, tt.want != nil)
			}
			if !ok {
				return
			}
			b, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lacks %s", b, w)
				}
			}
		})
	}
}

// TestStruggleNoteIsOneItalicParagraph: the struggle note, shown inside
// the agent's message, is a paragraph of its own, italic, signed mm, its
// underscores escaped so Markdown keeps it whole.
func TestStruggleNoteIsOneItalicParagraph(t *testing.T) {
	n := StruggleNote(engine.Struggle{Level: engine.Severe, Kind: "stuck", Text: "stuck: read_file ×6"})
	body := strings.TrimSpace(n)
	if !strings.HasPrefix(n, "\n\n") || !strings.HasSuffix(n, "\n\n") || !strings.HasPrefix(body, "_mm:") || !strings.HasSuffix(body, "_") {
		t.Errorf("note %q", n)
	}
	if strings.Contains(body, "\n") {
		t.Errorf("note on several lines: %q", n)
	}
	if strings.Contains(strings.Trim(body, "_"), "read_file") {
		t.Errorf("an underscore in the text is not escaped: %q", n)
	}
}
