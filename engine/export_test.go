package engine

// HeldBytes is what the session holds in memory of its conversation: the
// bytes of its messages' contents (a masked output kept on disk counts
// as its stub).
func HeldBytes(s *Session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.history {
		n += len(m.Content)
	}
	return n
}
