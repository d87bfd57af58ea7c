package acptest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hung is the bound past which a wait calls the agent hung. It is not a
// speed budget: the agent may be race-built on a loaded machine.
const Hung = 30 * time.Second

// exitBound is how long an agent may take to end once its input ended:
// an agent that lingers after its editor left is a bug a user sees.
const exitBound = 10 * time.Second

// Stream keeps a copy of what goes through one direction of a
// connection, and wakes whoever waits on it at each write.
type Stream struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced at each write, once waited on
}

func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return s.buf.Write(p)
}

// String is everything written so far.
func (s *Stream) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// WaitFor waits until the stream holds text.
func (s *Stream) WaitFor(t testing.TB, text string) {
	t.Helper()
	s.WaitFrom(t, 0, text)
}

// WaitFrom waits until the stream holds text at or after offset from,
// and returns the offset just past it: a caller that waits for one
// thing after another passes the last offset on.
func (s *Stream) WaitFrom(t testing.TB, from int, text string) int {
	t.Helper()
	timeout := time.After(Hung)
	for {
		s.mu.Lock()
		start := min(from, s.buf.Len())
		i := strings.Index(s.buf.String()[start:], text)
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		changed := s.changed
		s.mu.Unlock()
		if i >= 0 {
			return start + i + len(text)
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("timed out waiting for %q in the stream:\n%s", text, tail(s.String(), 2000))
		}
	}
}

// tail is the end of text, at most n bytes of it.
func tail(text string, n int) string {
	if len(text) > n {
		return "…" + text[len(text)-n:]
	}
	return text
}
