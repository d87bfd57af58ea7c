package engine_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/tools"
)

// realStreams finds a directory shared/real-streams in a parent of the
// module, or "": responses of real model servers, captured byte for byte
// and kept beside the checkout rather than in it.
func realStreams() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, "shared", "real-streams")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// anyTool accepts any arguments and echoes them: the captures call tools
// of their own (weather, run_command…).
type anyTool struct{ name string }

func (a anyTool) Name() string            { return a.name }
func (a anyTool) Description() string     { return "Test tool " + a.name + "." }
func (a anyTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (a anyTool) Kind() tools.Kind        { return tools.KindOther }
func (a anyTool) Caps() tools.Caps        { return tools.Anything }
func (a anyTool) Describe(tools.Env, json.RawMessage) tools.Call {
	return tools.Call{Title: a.name}
}
func (a anyTool) Run(_ context.Context, _ tools.Env, args json.RawMessage) (tools.Result, error) {
	return tools.Result{Text: a.name + " ran with " + string(args)}, nil
}

// replayWant is what a capture must give through the real client and
// engine: the tools run (in order), parts of the shown text, and the end.
type replayWant struct {
	ran       []string
	shown     []string
	notShown  []string
	thought   bool
	end       engine.StopReason
	struggles int // text-call, broken-call and unknown-tool struggles allowed
	status    int // for a plain error body (*.json)
}

var replayCases = map[string]replayWant{
	"01": {shown: []string{"Olá"}, thought: true},
	"02": {ran: []string{"weather"}, thought: true},
	"03": {shown: []string{"40"}},
	"04": {ran: []string{"weather"}, thought: true},
	// Harmony markup in the content (no reasoning parser on the server):
	// the analysis channel is a thought, the final one the answer, and no
	// marker is shown.
	"05": {shown: []string{"Got it! If you have any questions"}, notShown: []string{"<|", "User says"}, thought: true},
	// Markup leaked, then the real call: the real call
	// runs, the markup is not shown, no "tool call as text" struggle.
	"06": {ran: []string{"get_current_weather"}, shown: []string{"Let me check the current weather"}, notShown: []string{"<tool_call>", "<function"}},
	// Fragments end without finish_reason: a failed turn with one line.
	"07": {thought: true, end: engine.Failed},
	// The legacy in-stream "error:" line is a server error: the call is
	// retried once and the retry's answer shown.
	"08": {shown: []string{"All done."}},
	// Overflow in each llama.cpp wording (the newer 400 with n_ctx, the
	// older 500 without numbers, the old 400 wording): mm shrinks what it
	// sends and sends it again; the retry is answered.
	"09": {shown: []string{"All done."}, status: 400},
	"10": {shown: []string{"All done."}, status: 500},
	"11": {shown: []string{"All done."}, status: 400},
	"12": {shown: []string{"My name is Neo Vim."}},
	"13": {ran: []string{"run_command", "run_command"}},
	// A fragment: the text call is cut off; mm must not run it nor show it.
	"14": {notShown: []string{"<tool_call>"}, end: engine.Failed, struggles: 1},
	"15": {ran: []string{"run_command"}},
	"16": {ran: []string{"searchGoogle"}},
	"17": {thought: true, notShown: []string{"<think>"}, end: engine.Failed},
	"18": {end: engine.Failed},
	"19": {notShown: []string{"<think>"}, end: engine.Failed},
	"20": {ran: []string{"weather"}},
	"21": {ran: []string{"add", "multiply"}},
	"22": {ran: []string{"weather"}, shown: []string{"PRE"}},
}

// TestReplayRealStreams replays every capture found by realStreams
// through the fake server, the real client and the engine:
// tool calls run, text is shown without markup, errors are one line.
func TestReplayRealStreams(t *testing.T) {
	dir := realStreams()
	if dir == "" {
		t.Skip("no shared/real-streams above the module: the real captures are not part of the project")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "*"))
	seen := 0
	for _, path := range paths {
		base := filepath.Base(path)
		if strings.HasSuffix(base, ".request.json") || !strings.HasSuffix(base, ".sse") && !strings.HasSuffix(base, ".json") {
			continue
		}
		want, ok := replayCases[base[:2]]
		if !ok {
			t.Errorf("%s: a capture with no expectation", base)
			continue
		}
		seen++
		t.Run(strings.TrimSuffix(base, filepath.Ext(base)), func(t *testing.T) {
			replay(t, path, want)
		})
	}
	if seen < len(replayCases) {
		t.Errorf("%d captures replayed, %d expected", seen, len(replayCases))
	}
}

func replay(t *testing.T, path string, want replayWant) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var first llmtest.Step
	if want.status != 0 {
		first.HTTPError = &llmtest.HTTPError{Status: want.status, Body: string(b)}
	} else {
		first.Raw = strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	}
	reg := tools.NewRegistry(anyTool{"weather"}, anyTool{"get_current_weather"}, anyTool{"run_command"},
		anyTool{"searchGoogle"}, anyTool{"add"}, anyTool{"multiply"})
	s, _ := newSession(t, script(first, llmtest.Step{Content: "All done."}), func(o *engine.Options) { o.Tools = reg })
	var (
		ran            []string
		shown, thought strings.Builder
		struggles      []string
	)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	end := s.Run(ctx, "go", func(e engine.Event) {
		switch e := e.(type) {
		case engine.ToolStarted:
			ran = append(ran, e.Name)
		case engine.Text:
			shown.WriteString(e.Text)
		case engine.Thought:
			thought.WriteString(e.Text)
		case engine.Struggle:
			struggles = append(struggles, e.Kind+": "+e.Text)
		}
	})
	t.Logf("end %s %q; ran %v; shown %q; struggles %q", end.Reason, end.Err, ran, shown.String(), struggles)
	wantEnd := want.end
	if wantEnd == "" {
		wantEnd = engine.EndTurn
	}
	if end.Reason != wantEnd {
		t.Errorf("end = %s (%s), want %s", end.Reason, end.Err, wantEnd)
	}
	if end.Reason == engine.Failed && (end.Err == "" || strings.Contains(end.Err, "\n") || strings.Contains(end.Err, "{")) {
		t.Errorf("a failed turn must end with one plain line: %q", end.Err)
	}
	if strings.Join(ran, ",") != strings.Join(want.ran, ",") {
		t.Errorf("ran %v, want %v", ran, want.ran)
	}
	for _, w := range want.shown {
		if !strings.Contains(shown.String(), w) {
			t.Errorf("shown %q lacks %q", shown.String(), w)
		}
	}
	for _, w := range want.notShown {
		if strings.Contains(shown.String(), w) {
			t.Errorf("shown %q holds %q", shown.String(), w)
		}
	}
	if want.thought && thought.Len() == 0 {
		t.Error("no reasoning was shown as thought")
	}
	bad := 0
	for _, st := range struggles {
		if strings.HasPrefix(st, "text_tool_call") || strings.HasPrefix(st, "broken_call") || strings.HasPrefix(st, "unknown_tool") {
			bad++
		}
	}
	if bad > want.struggles {
		t.Errorf("struggles %q", struggles)
	}
}
