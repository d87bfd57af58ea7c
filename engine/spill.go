package engine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mm-agent/mm/engine/compact"
	"github.com/mm-agent/mm/engine/llm"
)

// A long session keeps every tool output whole (the stored conversation
// is never cut), but once an output is masked the requests carry only its
// one-line stub: the whole text is needed again only to store the
// session, to fork it or to summarise old turns. Kept in memory, thirty
// reads of big files made the process grow by megabytes for text it would
// not send again; so a masked output moves to a file of the session in
// the state directory and memory keeps the stub.

// spillRef is where one output lies in the spill file.
type spillRef struct {
	off int64
	n   int
}

// spillFile is a session's file of masked outputs: append-only, removed
// from the directory as soon as it is created (what it holds is already
// in the session's record, or will be at the next save, which reads it
// back), closed when the session is collected (os.File's own cleanup).
type spillFile struct {
	f   *os.File
	end int64
}

func newSpillFile(dir string) (*spillFile, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("keep outputs on disk: %w", err)
	}
	f, err := os.CreateTemp(dir, ".outputs-*")
	if err != nil {
		return nil, fmt.Errorf("keep outputs on disk: %w", err)
	}
	// Unlinked at once on systems that allow it: nothing is left behind
	// when mm stops, however it stops.
	os.Remove(f.Name())
	return &spillFile{f: f}, nil
}

func (sp *spillFile) put(s string) (spillRef, error) {
	if _, err := sp.f.WriteAt([]byte(s), sp.end); err != nil {
		return spillRef{}, fmt.Errorf("keep an output on disk: %w", err)
	}
	r := spillRef{off: sp.end, n: len(s)}
	sp.end += int64(len(s))
	return r, nil
}

func (sp *spillFile) get(r spillRef) (string, error) {
	b := make([]byte, r.n)
	if _, err := sp.f.ReadAt(b, r.off); err != nil && !(errors.Is(err, io.EOF) && r.n == 0) {
		return "", fmt.Errorf("read an output kept on disk: %w", err)
	}
	return string(b), nil
}

// spillMasked moves the masked tool outputs still held whole to the
// spill file, each replaced in memory by the stub that is sent in its
// place (so requests stay byte-identical). A session without a store
// keeps them in memory; a spill that fails keeps them too, with a log
// line.
func (s *Session) spillMasked() {
	if s.opts.Store == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := map[string]llm.ToolCall{}
	for i := 0; i < s.cs.maskBefore && i < len(s.history); i++ {
		m := &s.history[i]
		for _, c := range m.ToolCalls {
			calls[c.ID] = c
		}
		if _, done := s.cs.spilled[i]; done || m.Role != llm.RoleTool || !compact.Worth(m.Content) {
			continue
		}
		if s.spill == nil {
			sp, err := newSpillFile(filepath.Join(s.opts.Store.Dir(), "sessions"))
			if err != nil {
				s.opts.Logger.Warn("masked outputs stay in memory", "err", err)
				return
			}
			s.spill = sp
		}
		ref, err := s.spill.put(m.Content)
		if err != nil {
			s.opts.Logger.Warn("masked outputs stay in memory", "err", err)
			return
		}
		if s.cs.spilled == nil {
			s.cs.spilled = map[int]spillRef{}
		}
		s.cs.spilled[i] = ref
		m.Content = compact.Stub(calls[m.ToolCallID], m.Content)
	}
}

// wholeLocked returns h (a copy of the history from index from) with
// the outputs kept on disk read back. Called with s.mu held.
func (s *Session) wholeLocked(h []llm.Message, from int) []llm.Message {
	for i := range h {
		if ref, ok := s.cs.spilled[from+i]; ok {
			if c, err := s.spill.get(ref); err == nil {
				h[i].Content = c
			} else {
				s.opts.Logger.Error("an output kept on disk is lost", "err", err)
			}
		}
	}
	return h
}

// spilledLocked is a copy of the spill index, for a snapshot whose
// history indexes must not move under it. Called with s.mu held.
func (s *Session) spilledLocked() func(i int) (string, bool, error) {
	if len(s.cs.spilled) == 0 {
		return nil
	}
	refs := make(map[int]spillRef, len(s.cs.spilled))
	for i, r := range s.cs.spilled {
		refs[i] = r
	}
	sp := s.spill
	return func(i int) (string, bool, error) {
		r, ok := refs[i]
		if !ok {
			return "", false, nil
		}
		c, err := sp.get(r)
		return c, true, err
	}
}
