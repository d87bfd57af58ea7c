package llm

import (
	"sync"
	"time"
)

// FakeClock is a clock that moves only when told, so that a test can show
// that chunks restart the watchdog without depending on the scheduler of
// a loaded machine.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Duration
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *FakeClock
	f       func()
	at      time.Duration
	stopped bool
}

// UseClock makes c's watchdog use clk.
func UseClock(c *Client, clk *FakeClock) { c.clock = clk }

func (c *FakeClock) AfterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, f: f, at: c.now + d}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock and runs the timers that come due.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now += d
	var due []func()
	for _, t := range c.timers {
		if !t.stopped && t.at <= c.now {
			t.stopped = true
			due = append(due, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	active := !t.stopped
	t.at, t.stopped = t.c.now+d, false
	return active
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	active := !t.stopped
	t.stopped = true
	return active
}

// StartHintFor is StartHint on the system goos.
var StartHintFor = startHint
