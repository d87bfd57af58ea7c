package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// TestStallEndsTurnInTime: a server that stops sending ends the
// turn within the watchdog timeout plus one second, with a stalled
// struggle, and the next prompt of the session works.
func TestStallEndsTurnInTime(t *testing.T) {
	const idle = 500 * time.Millisecond
	srv := llmtest.NewServer(script(
		llmtest.Step{Content: "one two three four five", StallAfter: ptr(3)},
		llmtest.Step{Content: "back"},
	))
	defer srv.Close()
	s := engine.NewSession(engine.Options{
		Model: llm.New(llm.Options{Provider: "llamacpp", BaseURL: srv.URL(), IdleTimeout: idle, FirstTokenTimeout: 5 * time.Second, RetryDelays: []time.Duration{}}),
		Tools: testTools(), Env: newEnv(t),
	})
	var r recorder
	start := time.Now()
	end := s.Run(context.Background(), "go", r.emit)
	took := time.Since(start)
	if end.Reason != engine.Failed {
		t.Fatalf("end = %+v", end)
	}
	if took > idle+time.Second {
		t.Errorf("the stalled turn ended after %v, want ≤ %v", took, idle+time.Second)
	}
	if st := r.struggles(); len(st) != 1 || st[0].Kind != "stalled" || st[0].Level != engine.Severe {
		t.Errorf("struggles = %+v", st)
	}
	if end := s.Run(context.Background(), "again", func(engine.Event) {}); end.Reason != engine.EndTurn {
		t.Errorf("next prompt after a stall: %+v", end)
	}
}
