package tools

import (
	"crypto/sha256"
	"sync"
)

// ReadTracker remembers which files the model has read in this session and
// what they held, so that an existing file is edited only after a read and
// never over a change made on disk since that read. It is safe for
// concurrent use.
type ReadTracker struct {
	mu   sync.Mutex
	seen map[string][sha256.Size]byte
}

// NewReadTracker returns an empty tracker.
func NewReadTracker() *ReadTracker {
	return &ReadTracker{seen: make(map[string][sha256.Size]byte)}
}

// Record notes that the model has seen path holding content (after a read,
// or after mm itself wrote it).
func (r *ReadTracker) Record(path string, content []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen[path] = sha256.Sum256(content)
}

// Seen reports whether path was read in this session.
func (r *ReadTracker) Seen(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.seen[path]
	return ok
}

// Check says whether an existing file holding current may be changed: ""
// when it may, else the repair instruction for the model. rel is the path
// as the model should write it.
func (r *ReadTracker) Check(path, rel string, current []byte) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	sum, ok := r.seen[path]
	switch {
	case !ok:
		return "[error: " + rel + " exists and you have not read it in this session — call read_file on it first, then edit it]"
	case sum != sha256.Sum256(current):
		return "[error: " + rel + " changed on disk since you read it — read it again, then redo your change]"
	}
	return ""
}

// Forget drops what is known of path (after it was deleted or moved).
func (r *ReadTracker) Forget(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.seen, path)
}
