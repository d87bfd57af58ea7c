package lspbridge

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// TestGoSafeRecovers: a panic on a goroutine of the
// bridge is recovered, joined, and reported as one line.
func TestGoSafeRecovers(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var wg sync.WaitGroup
	var got string
	goSafe(&wg, log, "the test", func() { panic("boom") }, func(line string) { got = line })
	wg.Wait()
	if got != "internal error in the test: boom" {
		t.Errorf("recovered line = %q", got)
	}
	if n := strings.Count(strings.TrimSpace(logs.String()), "\n"); n != 0 || !strings.Contains(logs.String(), "boom") {
		t.Errorf("the panic was not logged as one line:\n%s", logs.String())
	}
}

// TestWorkAndOutstandingBounded: a long session's
// progress reports and unwaited changes stay bounded, and the indices of
// the reports still kept keep their meaning.
func TestWorkAndOutstandingBounded(t *testing.T) {
	s := &server{docs: map[string]*document{}, diags: map[string]*fileDiags{}} // not started: not ready
	s.mu.Lock()
	s.resetGenLocked()
	for i := range 10 * maxWork {
		s.beginWorkLocked(&work{title: "diagnose", ended: i%2 == 0})
	}
	if n := len(s.work["diagnose"]); n > maxWork {
		t.Errorf("%d progress reports kept, bound %d", n, maxWork)
	}
	last := 10*maxWork - 1 // odd: not ended
	if s.workEndedLocked("diagnose", last) || !s.workEndedLocked("diagnose", last-1) || !s.workEndedLocked("diagnose", 0) {
		t.Error("the indices of the kept reports moved")
	}
	if s.workEndedLocked("diagnose", last+1) {
		t.Error("a report not begun yet counts as ended")
	}
	for range 10 * maxOutstanding {
		s.outstanding = append(s.outstanding, &pending{gen: s.gen, title: "x", idx: 1 << 30})
	}
	s.mu.Unlock()
	s.pruneOutstanding()
	if n := len(s.outstanding); n > maxOutstanding {
		t.Errorf("%d outstanding changes kept, bound %d", n, maxOutstanding)
	}
}
