package engine_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
)

// TestSessionSavedAndRestored is the session store through the engine: a turn with a
// tool call is stored after the turn; a new session restored from the
// file sends the whole earlier history, continues the call numbering,
// and keeps the transcript for replay.
func TestSessionSavedAndRestored(t *testing.T) {
	st := store.Open(t.TempDir(), nil)
	served := func() (string, string) { return "llamacpp", "fake-model" }
	s, srv := newSession(t, script(
		llmtest.Step{Reasoning: "echo it", ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"one"}`)}},
		llmtest.Step{Content: "first answer"},
		llmtest.Step{Content: "second answer"},
	), func(o *engine.Options) { o.Store, o.ID, o.Served = st, "sess_1", served })
	var r recorder
	if end := s.Run(context.Background(), "first prompt\nwith detail", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("turn 1: %+v", end)
	}
	rec, err := st.Load("sess_1")
	if err != nil {
		t.Fatalf("not saved after the turn: %v", err)
	}
	if !rec.Reasoned {
		t.Errorf("the model reasoned, the record says not")
	}
	if rec.Title != "first prompt" || rec.Provider != "llamacpp" || rec.Model != "fake-model" || rec.CallSeq == 0 {
		t.Errorf("record = %+v", rec)
	}
	var kinds []string
	for _, e := range rec.Replay {
		k := string(e.Kind)
		if e.Tool != nil {
			k += ":" + e.Tool.Status
		}
		kinds = append(kinds, k)
	}
	if got := strings.Join(kinds, " "); got != "user tool:completed agent" {
		t.Errorf("replay = %s, want user tool:completed agent", got)
	}
	if rec.Replay[0].Text != "first prompt\nwith detail" || rec.Replay[2].Text != "first answer" {
		t.Errorf("replay texts = %q / %q", rec.Replay[0].Text, rec.Replay[2].Text)
	}

	// A new session (an agent restart) restored from the file.
	s2 := engine.NewSession(engine.Options{Model: fakeModel(srv), ModelName: "fake-model", Tools: testTools(), Env: &testEnv{dir: rec.Cwd}, Store: st, ID: "sess_1", Served: served})
	s2.Restore(rec)
	if !s2.Reasoned() {
		t.Errorf("restored session forgot that the model reasons")
	}
	if end := s2.Run(context.Background(), "second prompt", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("turn 2: %+v", end)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages
	var said []string
	for _, m := range last {
		said = append(said, m.Role+":"+m.Content)
	}
	joined := strings.Join(said, "|")
	if !strings.Contains(joined, "first prompt") || !strings.Contains(joined, "assistant:first answer") || !strings.HasSuffix(joined, "user:second prompt") {
		t.Errorf("the restored session's request lacks the earlier history: %s", joined)
	}
	rec2, _ := st.Load("sess_1")
	if len(rec2.Replay) != 5 || rec2.CallSeq < rec.CallSeq || !rec2.Updated.After(rec.Updated) {
		t.Errorf("after turn 2: replay %d entries, callSeq %d (was %d)", len(rec2.Replay), rec2.CallSeq, rec.CallSeq)
	}
}

// TestChoices: the model and thought level chosen apply to the next
// request; a note for the model (a mode change) is appended at the head
// of the next user message, so the earlier prefix is sent unchanged.
func TestChoices(t *testing.T) {
	s, srv := newSession(t, script(
		llmtest.Step{Content: "one"},
		llmtest.Step{Content: "two"},
		llmtest.Step{Content: "three"},
	), nil)
	ctx := context.Background()
	var r recorder
	s.Run(ctx, "first", r.emit)
	s.SetModel("big-model")
	s.SetThinking(engine.ThinkingOff)
	s.Tell("[mm: plan mode]")
	s.Run(ctx, "second", r.emit)
	s.SetThinking("high")
	s.Run(ctx, "third", r.emit)
	reqs := srv.Requests()
	if reqs[0].Model != "fake-model" || reqs[1].Model != "big-model" {
		t.Errorf("models = %q, %q", reqs[0].Model, reqs[1].Model)
	}
	var kw map[string]any
	if !reqs[1].Field("chat_template_kwargs", &kw) || kw["enable_thinking"] != false {
		t.Errorf("thinking off: chat_template_kwargs = %v", kw)
	}
	var effort string
	if reqs[1].Field("reasoning_effort", &effort) {
		t.Errorf("thinking off still sends reasoning_effort %q", effort)
	}
	if !reqs[2].Field("reasoning_effort", &effort) || effort != "high" || reqs[2].Field("chat_template_kwargs", &kw) {
		t.Errorf("high: reasoning_effort %q, kwargs present %v", effort, reqs[2].Field("chat_template_kwargs", &kw))
	}
	if got := reqs[1].Last().Content; got != "[mm: plan mode]\n\nsecond" {
		t.Errorf("note = %q", got)
	}
	if got := reqs[2].Last().Content; got != "third" {
		t.Errorf("the note was sent twice: %q", got)
	}
	// Prefix: request 2 starts with request 1's messages byte for byte.
	prev, next := rawMessages(t, reqs[0].Body), rawMessages(t, reqs[1].Body)
	for i := range prev {
		if !bytes.Equal(prev[i], next[i]) {
			t.Errorf("message %d changed after the mode note:\n%s\n%s", i, prev[i], next[i])
		}
	}
}

// TestSaveFailureIsANote: a store that cannot be written is a warning;
// the turn still answers.
func TestSaveFailureIsANote(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o600)
	s, _ := newSession(t, script(llmtest.Step{Content: "fine"}), func(o *engine.Options) {
		o.Store, o.ID = store.Open(blocker, nil), "sess_x"
	})
	var r recorder
	if end := s.Run(context.Background(), "hi", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("end = %+v", end)
	}
	st := r.struggles()
	if len(st) != 1 || st[0].Level != engine.Warning || !strings.Contains(st[0].Text, "session not saved") {
		t.Errorf("struggles = %+v", st)
	}
}

// TestFailureRecordedWithItsModel: a failed turn is stored with the model
// and provider that produced it, and a cancelled one is still saved.
func TestFailureRecordedWithItsModel(t *testing.T) {
	st := store.Open(t.TempDir(), nil)
	s, _ := newSession(t, script(
		llmtest.Step{HTTPError: &llmtest.HTTPError{Status: 400, Body: `{"error":{"message":"bad request from the test"}}`}},
	), func(o *engine.Options) {
		o.Store, o.ID = st, "sess_f"
		o.Served = func() (string, string) { return "llamacpp", "fake-model" }
	})
	s.SetModel("big-model")
	var r recorder
	end := s.Run(context.Background(), "break", r.emit)
	if end.Reason != engine.Failed {
		t.Fatalf("end = %+v", end)
	}
	rec, err := st.Load("sess_f")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Errors) != 1 || rec.Errors[0].Model != "big-model" || rec.Errors[0].Provider != "llamacpp" || rec.Errors[0].Text != end.Err {
		t.Errorf("errors = %+v (turn: %q)", rec.Errors, end.Err)
	}
	if rec.Model != "big-model" {
		t.Errorf("record model = %q", rec.Model)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if end := s.Run(ctx, "cancelled prompt", r.emit); end.Reason != engine.Cancelled {
		t.Fatalf("end = %+v", end)
	}
	rec, _ = st.Load("sess_f")
	if rec.Turns != 2 {
		t.Errorf("the cancelled turn was not saved: turns = %d", rec.Turns)
	}
}

// TestStoreStress runs turns with tool calls while other goroutines
// change the mode and the thought level, save, snapshot and read the
// transcript, as an editor's pickers do during a turn. Under -race it
// shows that a snapshot shares nothing a running turn writes; after it,
// the file holds the last turn (no mid-turn snapshot replaced it).
// Bounded: a fixed number of turns, and a deadline.
func TestStoreStress(t *testing.T) {
	st := store.Open(t.TempDir(), nil)
	sc := script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"one"}`), call("echo", `{"text":"two"}`)}},
		llmtest.Step{Content: "done"},
	)
	sc.Loop = true
	s, _ := newSession(t, sc, func(o *engine.Options) { o.Store, o.ID = st, "sess_stress" })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	const turns = 12
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var saveErrs sync.Map
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			modes := []string{"ask", "plan", "accept-edits"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				switch g {
				case 0:
					s.SetMode(modes[i%len(modes)])
					if err := s.Save(); err != nil {
						saveErrs.Store(err.Error(), true)
					}
				case 1:
					s.SetThinking([]string{"", "high", engine.ThinkingOff}[i%3])
					if err := s.Save(); err != nil {
						saveErrs.Store(err.Error(), true)
					}
				case 2:
					for _, e := range s.Record().Replay {
						if e.Tool != nil {
							_ = e.Tool.Status + e.Tool.Output
						}
					}
				case 3:
					for _, e := range s.Replay() {
						if e.Tool != nil {
							_ = len(e.Tool.Diffs) + len(e.Tool.Locations)
						}
					}
				}
			}
		}()
	}
	var r recorder
	for i := range turns {
		if end := s.Run(ctx, "go", r.emit); end.Reason != engine.EndTurn {
			t.Fatalf("turn %d: %+v", i, end)
		}
	}
	close(stop)
	wg.Wait()
	saveErrs.Range(func(k, _ any) bool {
		t.Errorf("a concurrent save failed: %v", k)
		return true
	})
	for _, st := range r.struggles() {
		if st.Kind == "store" {
			t.Errorf("a turn's save failed: %s", st.Text)
		}
	}

	rec, err := st.Load("sess_stress")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Turns != turns {
		t.Errorf("the file holds %d turns, want %d (an older snapshot replaced a newer one)", rec.Turns, turns)
	}
	for i, e := range rec.Replay {
		if e.Tool != nil && e.Tool.Status != "completed" {
			t.Errorf("entry %d: tool %s is %q on disk after the last turn", i, e.Tool.ID, e.Tool.Status)
		}
	}
}
