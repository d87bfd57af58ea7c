package lspbridge

import (
	"slices"
	"time"
)

// A fixed wait is wrong on every machine but one: too long where a
// server hangs, too short where the machine is busy and the server is
// only slow. An edit's check therefore waits, at most, a high percentile
// of what this server needed for the checks of the session (including
// those that finished after their result was given) times a margin,
// within Config.Wait and Config.MaxWait. The wait ends on the server's
// answer, not on the bound: on an idle machine it adds nothing.

const (
	// waitSamples is how many recent checks the wait is computed from.
	waitSamples = 32
	// waitFactor is the margin over the percentile.
	waitFactor = 3
)

// recordWait adds how long a check of the server took, from the edit to
// its last answer.
func (s *server) recordWait(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	if n := len(s.waits) - waitSamples; n > 0 {
		s.waits = slices.Delete(s.waits, 0, n)
	}
}

// cold reports whether no check of the server has finished yet: its
// first one also waits for its initial analysis.
func (s *server) cold() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waits) == 0
}

// checkWait is how long an edit's check waits for s: MaxWait while s is
// cold, else the 90th percentile of its recent checks times waitFactor,
// within Wait and MaxWait.
func (m *Manager) checkWait(s *server) time.Duration {
	floor, ceil := m.cfg.wait(), m.cfg.maxWait()
	s.mu.Lock()
	ws := slices.Clone(s.waits)
	s.mu.Unlock()
	if len(ws) == 0 {
		return ceil
	}
	slices.Sort(ws)
	p90 := ws[(len(ws)*9+9)/10-1]
	return min(max(p90*waitFactor, floor), ceil)
}

// lateWait bounds, from the edit, how long a check goes on after its
// result was given incomplete.
func (m *Manager) lateWait() time.Duration { return max(2*time.Minute, 2*m.cfg.maxWait()) }

// indexing reports whether the server is busy with work of its own (its
// initial load, indexing) rather than the diagnostics of a change.
func (s *server) indexing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.tokens {
		if !slices.Contains(titles(s.cfg.ProgressTitles), w.title) {
			return true
		}
	}
	return false
}

func titles(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	return out
}
