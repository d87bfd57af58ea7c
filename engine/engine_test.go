package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/workspace"
)

// testEnv is a minimal tools.Env over a temp dir that allows everything.
type testEnv struct {
	dir   string
	reads *tools.ReadTracker
}

func (e *testEnv) Cwd() string     { return e.dir }
func (e *testEnv) Roots() []string { return []string{e.dir} }
func (e *testEnv) ReadFile(_ context.Context, p string) ([]byte, error) {
	return os.ReadFile(p)
}
func (e *testEnv) WriteFile(_ context.Context, p string, b []byte, m fs.FileMode) error {
	return os.WriteFile(p, b, m)
}
func (e *testEnv) Approve(context.Context, tools.Approval) (tools.Decision, error) {
	return tools.Decision{Allowed: true}, nil
}
func (e *testEnv) Progress(string)                  {}
func (e *testEnv) Reads() *tools.ReadTracker        { return e.reads }
func newEnv(t *testing.T) *testEnv                  { return &testEnv{dir: t.TempDir(), reads: tools.NewReadTracker()} }
func ptr[T any](v T) *T                             { return &v }
func script(steps ...llmtest.Step) llmtest.Scenario { return llmtest.Scenario{Steps: steps} }

type echoParams struct {
	Text string `json:"text" desc:"what to echo"`
}

// testTools are small real tools: echo, and boom (which panics).
func testTools() *tools.Registry {
	echo := tools.New(tools.Spec[echoParams]{
		Name: "echo", Description: "Echo the text.", Kind: tools.KindOther, Caps: tools.Reads,
		Run: func(_ context.Context, _ tools.Env, p echoParams) (tools.Result, error) {
			return tools.Result{Text: "echo: " + p.Text}, nil
		},
	})
	boom := tools.New(tools.Spec[echoParams]{
		Name: "boom", Description: "Explode.", Kind: tools.KindOther, Caps: tools.Reads,
		Run: func(context.Context, tools.Env, echoParams) (tools.Result, error) {
			panic("boom")
		},
	})
	return tools.NewRegistry(echo, boom)
}

type recorder struct {
	mu     sync.Mutex
	events []engine.Event
}

func (r *recorder) emit(e engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) struggles() []engine.Struggle {
	var s []engine.Struggle
	for _, e := range r.events {
		if st, ok := e.(engine.Struggle); ok {
			s = append(s, st)
		}
	}
	return s
}

// diskEnv is a workspace on dir, on the disk, where the policy allows
// everything (yolo): the environment the real tools run in.
func diskEnv(t testing.TB, dir string, files tools.Files) *workspace.Workspace {
	t.Helper()
	env, err := workspace.New(workspace.Options{Cwd: dir, Policy: permit.NewPolicy(true, nil, nil), Files: files})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// fakeModel is the client of the scripted server srv, retrying nothing.
func fakeModel(srv *llmtest.Server) *llm.Client {
	return llm.New(llm.Options{Provider: "llamacpp", BaseURL: srv.URL(), RetryDelays: []time.Duration{}})
}

func newSession(t *testing.T, sc llmtest.Scenario, mod func(*engine.Options)) (*engine.Session, *llmtest.Server) {
	t.Helper()
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	opts := engine.Options{
		Model:     fakeModel(srv),
		ModelName: "fake-model",
		Tools:     testTools(),
		Env:       newEnv(t),
		Sampling:  llm.Sampling{MaxTokens: 4096},
	}
	if mod != nil {
		mod(&opts)
	}
	return engine.NewSession(opts), srv
}

func call(name, args string) llmtest.ToolCall {
	return llmtest.ToolCall{Name: name, ArgsRaw: args}
}

// TestPrefixStability: over a multi-turn session every request
// starts with the previous one byte for byte, the tools are sorted by
// name, and the system prompt does not depend on the workspace.
func TestPrefixStability(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{Reasoning: "use echo", ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"one"}`)}},
		llmtest.Step{Content: "first answer"},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"two"}`)}},
		llmtest.Step{Content: "second answer"},
	), func(o *engine.Options) { o.ProjectContext = "Always answer in English." })
	ctx := context.Background()
	var r recorder
	if end := s.Run(ctx, "first", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("turn 1: %+v", end)
	}
	if end := s.Run(ctx, "second", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("turn 2: %+v", end)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d", len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		prev, next := rawMessages(t, reqs[i-1].Body), rawMessages(t, reqs[i].Body)
		if len(next) <= len(prev) {
			t.Fatalf("request %d has %d messages, previous had %d", i, len(next), len(prev))
		}
		for j := range prev {
			if !bytes.Equal(prev[j], next[j]) {
				t.Errorf("request %d breaks the prefix at message %d:\n%s\n%s", i, j, prev[j], next[j])
			}
		}
		if !bytes.Equal(rawField(t, reqs[i-1].Body, "tools"), rawField(t, reqs[i].Body, "tools")) {
			t.Errorf("request %d changed the tools", i)
		}
	}
	if n := reqs[0].Tools; len(n) != 2 || n[0].Name != "boom" || n[1].Name != "echo" {
		t.Errorf("tools not sorted by name: %+v", n)
	}
	msgs := reqs[0].Messages
	if msgs[0].Role != "system" || strings.Contains(msgs[0].Content, s.History()[0].Content[:10]) {
		t.Errorf("first message: %+v", msgs[0])
	}
	if !strings.Contains(msgs[1].Content, "Always answer in English.") || !strings.Contains(msgs[1].Content, "Workspace: ") {
		t.Errorf("project context not at the head of the first user message: %q", msgs[1].Content)
	}
	if strings.Contains(reqs[2].Messages[len(reqs[2].Messages)-1].Content, "Always answer") {
		t.Errorf("project context repeated in a later user message")
	}

	// A second session in another workspace sends the same system prompt
	// and tools, byte for byte.
	s2, srv2 := newSession(t, script(llmtest.Step{Content: "hi"}), nil)
	s2.Run(ctx, "first", func(engine.Event) {})
	a, b := rawMessages(t, reqs[0].Body)[0], rawMessages(t, srv2.Requests()[0].Body)[0]
	if !bytes.Equal(a, b) {
		t.Errorf("system prompt differs across sessions:\n%s\n%s", a, b)
	}
	// Reasoning is shown but never stored.
	for _, m := range reqs[1].Messages {
		if strings.Contains(m.Content, "use echo") || m.ReasoningContent != "" {
			t.Errorf("reasoning entered history: %+v", m)
		}
	}
}

func rawMessages(t testing.TB, body []byte) []json.RawMessage {
	var ms []json.RawMessage
	if err := json.Unmarshal(rawField(t, body, "messages"), &ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

func rawField(t testing.TB, body []byte, key string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m[key]
}

// TestHistoryKeptWhenTurnFails: the failed turn's tool calls and
// results are in the next request.
func TestHistoryKeptWhenTurnFails(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"ran before the failure"}`)}},
		llmtest.Step{HTTPError: &llmtest.HTTPError{Status: 500, Body: `{"error":{"code":500,"message":"llama_decode failed","type":"server_error"}}`}},
		llmtest.Step{Content: "recovered"},
	), nil)
	var r recorder
	end := s.Run(context.Background(), "go", r.emit)
	if end.Reason != engine.Failed || !strings.Contains(end.Err, "llama_decode failed") {
		t.Fatalf("end = %+v", end)
	}
	if st := r.struggles(); len(st) != 1 || st[0].Level != engine.Severe || st[0].Kind != "server_error" {
		t.Errorf("struggles = %+v", st)
	}
	if end := s.Run(context.Background(), "again", func(engine.Event) {}); end.Reason != engine.EndTurn {
		t.Fatalf("next turn: %+v", end)
	}
	last := srv.Requests()[2].Messages
	found := false
	for _, m := range last {
		if m.Role == "tool" && m.Content == "echo: ran before the failure" {
			found = true
		}
	}
	if !found {
		t.Errorf("the failed turn's tool result is not in the next request: %+v", last)
	}
}

func TestUnknownToolIsText(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("python", `{"code":"print(1)"}`)}},
		llmtest.Step{Content: "sorry"},
	), nil)
	var r recorder
	if end := s.Run(context.Background(), "go", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("end = %+v", end)
	}
	msgs := srv.Requests()[1].Messages
	got := msgs[len(msgs)-1].Content
	if got != `[error: there is no tool named "python"; your tools are: boom, echo]` {
		t.Errorf("tool result = %q", got)
	}
}

func TestInvalidArgumentsAreText(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"txt":"x"}`)}},
		llmtest.Step{Content: "ok"},
	), nil)
	s.Run(context.Background(), "go", func(engine.Event) {})
	msgs := srv.Requests()[1].Messages
	got := msgs[len(msgs)-1].Content
	if !strings.Contains(got, `invalid arguments for echo`) || !strings.Contains(got, "expected {text}") {
		t.Errorf("tool result = %q", got)
	}
}

// TestMaxTurnsLastChance: at maxTurns one call without tools asks
// the model to sum up.
func TestMaxTurnsLastChance(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"1"}`)}},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"2"}`)}},
		llmtest.Step{Content: "I echoed twice; nothing remains.", ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"3"}`)}},
	), func(o *engine.Options) { o.MaxTurns = 2 })
	var r recorder
	end := s.Run(context.Background(), "go", r.emit)
	if end.Reason != engine.MaxTurns {
		t.Fatalf("end = %+v", end)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || len(reqs[2].Tools) != 0 {
		t.Fatalf("the last-chance call must offer no tools: %d requests, %d tools", len(reqs), len(reqs[len(reqs)-1].Tools))
	}
	if st := r.struggles(); len(st) != 1 || st[0].Kind != "max_turns" {
		t.Errorf("struggles = %+v", st)
	}
	h := s.History()
	if last := h[len(h)-1]; last.Role != llm.RoleAssistant || len(last.ToolCalls) != 0 || last.Content != "I echoed twice; nothing remains." {
		t.Errorf("a tool call from the summary call (offered no tools) was kept, or the summary lost: %+v", last)
	}
}

func TestCutOffNotice(t *testing.T) {
	s, _ := newSession(t, script(llmtest.Step{Content: "a long answer", FinishReason: "length"}), nil)
	var text strings.Builder
	end := s.Run(context.Background(), "go", func(e engine.Event) {
		if tx, ok := e.(engine.Text); ok {
			text.WriteString(tx.Text)
		}
	})
	if end.Reason != engine.MaxTokens || !strings.Contains(text.String(), "[answer cut off at max_tokens (4096)") {
		t.Errorf("end = %+v, text %q", end, text.String())
	}
}

func TestPanicInToolIsRecovered(t *testing.T) {
	s, _ := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("boom", `{"text":"x"}`)}},
		llmtest.Step{Content: "still here"},
	), nil)
	end := s.Run(context.Background(), "go", func(engine.Event) {})
	if end.Reason != engine.Failed || !strings.Contains(end.Err, "internal error") {
		t.Errorf("end = %+v", end)
	}
	if end := s.Run(context.Background(), "again", func(engine.Event) {}); end.Reason != engine.EndTurn {
		t.Errorf("the session does not serve after a panic: %+v", end)
	}
}

// TestEventOrder: a tool call is announced pending, then finished, between
// the text of the calls around it; the turn ends with TurnEnd and usage.
func TestEventOrder(t *testing.T) {
	s, _ := newSession(t, script(
		llmtest.Step{Reasoning: "think", ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"hi"}`)}},
		llmtest.Step{Content: "done"},
	), nil)
	var r recorder
	s.Run(context.Background(), "go", r.emit)
	var kinds []string
	for _, e := range r.events {
		switch e := e.(type) {
		case engine.Thought:
			kinds = append(kinds, "thought")
		case engine.ToolStarted:
			kinds = append(kinds, "start:"+e.Name)
		case engine.ToolFinished:
			kinds = append(kinds, "finish:"+string(e.Status)+":"+e.Result.Text)
		case engine.Text:
			kinds = append(kinds, "text")
		case engine.Usage:
			kinds = append(kinds, "usage")
		case engine.TurnEnd:
			kinds = append(kinds, "end:"+string(e.Reason))
		}
	}
	got := strings.Join(dedupe(kinds), " ")
	want := "thought usage start:echo finish:completed:echo: hi text usage end:end_turn"
	if got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
}

func dedupe(s []string) []string {
	var out []string
	for _, x := range s {
		if len(out) == 0 || out[len(out)-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// TestCancelIsNotAStruggle: a cancel mid-stream ends the turn as
// cancelled, with no struggle. (The bound tells a hang, not speed.)
func TestCancelIsNotAStruggle(t *testing.T) {
	s, srv := newSession(t, script(llmtest.Step{Content: "this will hang", StallAfter: ptr(2)}), nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-srv.StepStalled(0)
		cancel()
	}()
	var r recorder
	start := time.Now()
	end := s.Run(ctx, "go", r.emit)
	if end.Reason != engine.Cancelled {
		t.Errorf("end = %+v", end)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("cancel took %v: hung", d)
	}
	if st := r.struggles(); len(st) != 0 {
		t.Errorf("a cancel reported struggles: %+v", st)
	}
}
