package engine_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
)

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
