package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// The stalls are scripted with stall_after/silence and detected by the
// real timers with short timeouts; nothing here sleeps.
func TestWatchdog(t *testing.T) {
	const first, idle = 50 * time.Millisecond, 50 * time.Millisecond
	for _, tc := range []struct {
		name     string
		scenario string
		phase    llm.StallPhase
	}{
		{"silence before the headers", `
steps:
  - {content: late, silence: 10s}`, llm.StallFirstToken},
		{"role chunk then nothing", `
steps:
  - {content: never, stall_after: 1}`, llm.StallFirstToken},
		{"tokens then nothing", `
steps:
  - {content: "one two three four", stall_after: 3}`, llm.StallIdle},
		{"the same read without progress stalls", `
steps:
  - {content: done, silence: 10s}`, llm.StallFirstToken},
		{"comment pings do not feed the watchdog", `
steps:
  - raw: [': ping', '', ': ping', '', ': ping', '', ': ping', '', ': ping', '', ': ping', '',
           ': ping', '', ': ping', '', ': ping', '', ': ping', '', ': ping', '', ': ping', '',
           ': ping', '', ': ping', '', ': ping', '', ': ping', '', ': ping', '', ': ping', '']
    delay: 10ms`, llm.StallFirstToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, o := fastOn(t, tc.scenario)
			o.FirstTokenTimeout, o.IdleTimeout = first, idle
			start := time.Now()
			_, err := llm.New(o).Stream(context.Background(), hello(), nil)
			elapsed := time.Since(start)
			var se *llm.StallError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want *StallError", err)
			}
			if se.Phase != tc.phase {
				t.Errorf("phase %q, want %q", se.Phase, tc.phase)
			}
			if want := map[llm.StallPhase]time.Duration{llm.StallFirstToken: first, llm.StallIdle: idle}[tc.phase]; se.Timeout != want {
				t.Errorf("timeout %s, want %s", se.Timeout, want)
			}
			if se.Delivered != (tc.phase == llm.StallIdle) {
				t.Errorf("Delivered = %v", se.Delivered)
			}
			if elapsed > 3*time.Second {
				t.Errorf("stall noticed after %s", elapsed)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: a stall is not retried by Stream", n)
			}
			if llm.Classify(err) != llm.ClassStall {
				t.Errorf("Classify = %s", llm.Classify(err))
			}
			want := map[llm.StallPhase]string{llm.StallFirstToken: "firstTokenTimeout", llm.StallIdle: "watchdogTimeout"}[tc.phase]
			if got := llm.Explain(err); !strings.Contains(got, want) {
				t.Errorf("Explain = %q, want %q in it", got, want)
			}
		})
	}
}

// TestWatchdogFedByChunks shows that reasoning deltas and prompt progress
// restart the watchdog: between two chunks the clock moves by 80% of the
// timeout, so that the stream outlives the timeout several times over
// without ever crossing it. The clock is moved by hand (the callback runs
// between receiving a chunk and feeding the watchdog), so a loaded machine
// cannot make this test lie either way.
func TestWatchdogFedByChunks(t *testing.T) {
	const timeout = time.Second
	for _, tc := range []struct {
		name     string
		scenario string
		advance  func(llm.Delta) bool // whether to move the clock on this delta
	}{
		{"reasoning keeps a thinking model alive (38 s of thought)", `
steps:
  - reasoning: "a b c d e f g h i j k l m n o p q r s t u v w x y z"
    content: done`, func(d llm.Delta) bool { return d.Reasoning != "" }},
		{"prompt progress keeps a long prompt read alive past firstTokenTimeout", `
steps:
  - content: done
    progress: {total: 25300, chunks: 12}`, func(d llm.Delta) bool { return d.Progress != nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, o := fastOn(t, tc.scenario)
			o.FirstTokenTimeout, o.IdleTimeout = timeout, timeout
			c := llm.New(o)
			clk := &llm.FakeClock{}
			llm.UseClock(c, clk)
			var moved time.Duration
			r, err := c.Stream(context.Background(), hello(), func(d llm.Delta) error {
				if tc.advance(d) {
					clk.Advance(timeout * 8 / 10)
					moved += timeout * 8 / 10
				}
				return nil
			})
			if err != nil || r.Content != "done" {
				t.Fatalf("Stream = %q, %v after %s of fake time", r.Content, err, moved)
			}
			if moved < 5*timeout {
				t.Fatalf("only %s of fake time: proves nothing", moved)
			}
		})
	}
}

// TestWatchdogFakeClockStalls is the counterpart: the same clock moved
// past the timeout between two chunks cancels the generation.
func TestWatchdogFakeClockStalls(t *testing.T) {
	_, o := fastOn(t, "steps:\n  - {progress: {chunks: 3}, content: done}\n")
	o.FirstTokenTimeout, o.IdleTimeout = time.Second, time.Second
	c := llm.New(o)
	clk := &llm.FakeClock{}
	llm.UseClock(c, clk)
	_, err := c.Stream(context.Background(), hello(), func(d llm.Delta) error {
		if d.Progress != nil && d.Progress.Processed == d.Progress.Total {
			clk.Advance(1100 * time.Millisecond)
		}
		return nil
	})
	var se *llm.StallError
	if !errors.As(err, &se) || se.Phase != llm.StallFirstToken {
		t.Fatalf("err = %v, want a first-token stall", err)
	}
}

// A summary call (WatchdogScale 2) gets twice the timeouts: the same gap
// that stalls a normal call does not stall it.
func TestWatchdogScaleDoublesTimeouts(t *testing.T) {
	for _, tc := range []struct {
		scale float64
		stall bool
	}{{0, true}, {2, false}} {
		sc, _ := llmtest.Parse([]byte("steps:\n  - {progress: {chunks: 3}, content: done}\n"))
		srv := llmtest.NewServer(sc)
		o := fast(srv)
		o.FirstTokenTimeout, o.IdleTimeout = time.Second, time.Second
		c := llm.New(o)
		clk := &llm.FakeClock{}
		llm.UseClock(c, clk)
		req := hello()
		req.WatchdogScale = tc.scale
		r, err := c.Stream(context.Background(), req, func(d llm.Delta) error {
			if d.Progress != nil && d.Progress.Processed == d.Progress.Total {
				clk.Advance(1500 * time.Millisecond)
			}
			return nil
		})
		srv.Close()
		var se *llm.StallError
		if stalled := errors.As(err, &se); stalled != tc.stall {
			t.Fatalf("scale %v: stalled=%v (%v, %q), want %v", tc.scale, stalled, err, r.Content, tc.stall)
		}
	}
}
