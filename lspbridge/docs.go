package lspbridge

import (
	"github.com/mm-agent/mm/fileedit/disk"

	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"go.lsp.dev/protocol"
)

// pending is a document notification whose diagnostics mm waits for.
type pending struct {
	path    string
	version int32
	gen     int
	title   string // progress title bracketing its diagnostics, "" if none
	idx     int    // which progress of that title, counted per generation
	sentSeq uint64 // publishes received before it was sent
	sentAt  time.Time
}

// didChangeFull is textDocument/didChange with the whole text. It is
// written here because go.lsp.dev/protocol's TextDocumentContentChangeEvent
// always carries a range, and gopls then inserts the text instead of
// replacing the document.
type didChangeFull struct {
	TextDocument struct {
		URI     protocol.DocumentURI `json:"uri"`
		Version int32                `json:"version"`
	} `json:"textDocument"`
	ContentChanges []fullChange `json:"contentChanges"`
}

type fullChange struct {
	Text string `json:"text"`
}

// syncDoc makes the server's copy of path hold text: didOpen when the
// document is not open in the running process, didChange with the full
// text when it differs, nothing when it already holds it. The returned
// pending waits for the diagnostics of that version. While the server is
// starting, the text is kept and sent when it is ready (ErrNotReady).
func (s *server) syncDoc(ctx context.Context, path string, text []byte) (*pending, error) {
	return s.sendDoc(ctx, path, text, false)
}

// recheckDoc sends an open document's text again as a new version, so the
// server publishes its diagnostics anew: the exact signal that a file mm
// did not edit has been checked against the edit (an importer).
func (s *server) recheckDoc(ctx context.Context, path string, text []byte) (*pending, error) {
	return s.sendDoc(ctx, path, text, true)
}

func (s *server) sendDoc(ctx context.Context, path string, text []byte, force bool) (*pending, error) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	d := s.docs[path]
	if d == nil {
		d = &document{path: path, uri: fileURI(path), langID: s.cfg.languageID(s.lang, path)}
		s.docs[path] = d
	}
	if s.state != stateReady {
		d.text = bytes.Clone(text)
		d.gen = 0
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %s is starting", ErrNotReady, s.name())
	}
	p := s.cur
	var method string
	switch {
	case d.gen != s.gen:
		method = methodDidOpen
	case force || !bytes.Equal(d.text, text):
		method = methodDidChange
	default:
		pend := &pending{path: path, version: d.version, gen: s.gen, idx: -1, sentSeq: d.sentSeq}
		s.mu.Unlock()
		return pend, nil
	}
	d.version++
	d.text = bytes.Clone(text)
	d.gen = s.gen
	d.sentSeq = s.pubSeq
	pend := &pending{path: path, version: d.version, gen: s.gen, title: s.cfg.ProgressTitles[method], idx: s.sent[method], sentSeq: d.sentSeq, sentAt: time.Now()}
	s.sent[method]++
	s.mu.Unlock()

	var params any
	if method == methodDidOpen {
		params = &protocol.DidOpenTextDocumentParams{TextDocument: protocol.TextDocumentItem{
			URI: d.uri, LanguageID: protocol.LanguageIdentifier(d.langID), Version: d.version, Text: string(text),
		}}
	} else {
		c := &didChangeFull{ContentChanges: []fullChange{{Text: string(text)}}}
		c.TextDocument.URI, c.TextDocument.Version = d.uri, d.version
		params = c
	}
	s.log.Debug("sync", "method", method, "path", path, "version", d.version, "idx", pend.idx)
	if err := s.notify(ctx, p, method, params); err != nil {
		// The process died: the supervisor restarts it and reopens the
		// document with this text, and waitFor follows to the new process.
		s.log.Debug("send failed", "method", method, "err", err)
	}
	return pend, nil
}

// notify sends a notification within notifyTimeout. It is not cancelled
// with ctx (a document the server did not receive would be out of step
// with mm's copy from then on), but it is bounded: jsonrpc2 does not stop
// a write blocked on a full pipe, so the write runs on a goroutine of the
// server and, past the bound, the process is killed — its write then
// fails, sendMu is released, and the supervisor restarts the server,
// which reopens every document with mm's text.
func (s *server) notify(ctx context.Context, p *proc, method string, params any) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer cancel()
	done := make(chan error, 1)
	goSafe(&s.wg, s.log, "sending "+method, func() { done <- p.conn.Notify(ctx, method, params) }, func(line string) {
		done <- errors.New(line)
	})
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		s.log.Warn("language server stopped reading its input; restarting it", "method", method, "waited", notifyTimeout)
		s.notice(fmt.Sprintf("%s stopped reading its input for %v and was restarted", s.name(), notifyTimeout))
		p.kill()
		return fmt.Errorf("%s: %s not sent within %v", s.name(), method, notifyTimeout)
	}
}

// closeDoc forgets a document that was deleted.
func (s *server) closeDoc(ctx context.Context, path string) {
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	d := s.docs[path]
	delete(s.docs, path)
	delete(s.diags, path)
	open := d != nil && d.gen == s.gen && s.state == stateReady
	p := s.cur
	s.broadcastLocked()
	s.mu.Unlock()
	if open {
		_ = s.notify(ctx, p, methodDidClose, &protocol.DidCloseTextDocumentParams{
			TextDocument: protocol.TextDocumentIdentifier{URI: d.uri},
		})
	}
}

// filesChanged tells the server about files changed on disk by something
// other than mm's edits (bash): open documents get their new text, and
// every path is announced with didChangeWatchedFiles, without which
// neither gopls nor pyright notices.
func (s *server) filesChanged(ctx context.Context, paths []string) {
	var events []*protocol.FileEvent
	var outstanding []*pending
	defer func() {
		s.mu.Lock()
		s.outstanding = append(s.outstanding, outstanding...)
		s.mu.Unlock()
		s.pruneOutstanding()
	}()
	for _, path := range paths {
		data, err := disk.Read(ctx, s.root, path, disk.MaxSource)
		s.mu.Lock()
		d := s.docs[path]
		s.mu.Unlock()
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if d != nil {
				s.closeDoc(ctx, path)
			}
			events = append(events, &protocol.FileEvent{Type: protocol.FileChangeTypeDeleted, URI: fileURI(path)})
			continue
		case err != nil:
			continue
		case d != nil:
			if p, err := s.syncDoc(ctx, path, data); err == nil {
				outstanding = append(outstanding, p)
			}
		}
		events = append(events, &protocol.FileEvent{Type: protocol.FileChangeTypeChanged, URI: fileURI(path)})
	}
	s.mu.Lock()
	p, ready := s.cur, s.state == stateReady
	s.mu.Unlock()
	if !ready || len(events) == 0 {
		return
	}
	s.sendMu.Lock()
	defer s.sendMu.Unlock()
	s.mu.Lock()
	pend := &pending{gen: s.gen, title: s.cfg.ProgressTitles[methodDidWatched], idx: s.sent[methodDidWatched], sentAt: time.Now()}
	s.sent[methodDidWatched]++
	s.mu.Unlock()
	if err := s.notify(ctx, p, methodDidWatched, &protocol.DidChangeWatchedFilesParams{Changes: events}); err == nil {
		outstanding = append(outstanding, pend)
	}
}

// waitFor waits until the server has published the diagnostics of every
// pending notification, and the diagnostics that follow from them in
// other files: the end of the server's progress for the notification when
// it reports one, else Settle without a new publish. It wakes only when
// the server sends something (sig) or the settle timer fires, and returns
// false when ctx ends first.
func (s *server) waitFor(ctx context.Context, ps []*pending) bool {
	// Changes announced by Changed count too: their effects are part of
	// what the caller is about to read.
	s.mu.Lock()
	ps = append(slices.Clip(ps), s.outstanding...)
	s.mu.Unlock()
	defer s.pruneOutstanding()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		done, quietLeft := s.settledLocked(ps)
		sig, gone := s.sig, s.state == stateClosed || s.state == stateFailed
		s.mu.Unlock()
		if done {
			return true
		}
		if gone {
			return false
		}
		var fire <-chan time.Time
		if quietLeft > 0 {
			if timer == nil {
				timer = time.NewTimer(quietLeft)
			} else {
				timer.Reset(quietLeft)
			}
			fire = timer.C
		}
		select {
		case <-sig:
		case <-fire:
		case <-ctx.Done():
			return false
		}
	}
}

// settledLocked says whether ps are all settled; when only the quiet
// period is missing it returns how much of it is left.
func (s *server) settledLocked(ps []*pending) (bool, time.Duration) {
	if s.state != stateReady {
		return false, 0
	}
	settle := false
	var quietFrom time.Time
	for _, p := range ps {
		version, sentSeq, tracked := p.version, p.sentSeq, p.title != "" && p.idx >= 0
		if p.path == "" {
			// A watched-files change: no document version to match.
			switch {
			case p.gen != s.gen:
			case tracked && s.progressOK:
				if !s.workEndedLocked(p.title, p.idx) {
					return false, 0
				}
			default:
				settle = true
				if p.sentAt.After(quietFrom) {
					quietFrom = p.sentAt
				}
			}
			continue
		}
		if p.gen != s.gen {
			// Restarted since: wait for the reopened document.
			d := s.docs[p.path]
			if d == nil || d.gen != s.gen {
				return false, 0
			}
			version, sentSeq, tracked = d.version, d.sentSeq, false
		}
		fd := s.diags[p.path]
		if fd == nil || !(fd.version >= version || fd.version == 0 && fd.seq > sentSeq) {
			return false, 0
		}
		if tracked && s.progressOK {
			if !s.workEndedLocked(p.title, p.idx) {
				return false, 0
			}
			continue
		}
		if p.idx >= 0 {
			settle = true
		}
	}
	if !settle || s.onlyPendingOpenLocked(ps) {
		return true, 0
	}
	if s.lastPub.After(quietFrom) {
		quietFrom = s.lastPub
	}
	left := s.cfg.settle() - time.Since(quietFrom)
	return left <= 0, left
}

// onlyPendingOpenLocked reports whether nothing else can still come: the
// server reports only open files (Workspace unset), and the only open
// documents are the ones waited for, whose versions have arrived.
func (s *server) onlyPendingOpenLocked(ps []*pending) bool {
	if s.cfg.Workspace {
		return false
	}
	waited := map[string]bool{}
	for _, p := range ps {
		if p.path == "" {
			return false
		}
		waited[p.path] = true
	}
	for path, d := range s.docs {
		if d.gen == s.gen && !waited[path] {
			return false
		}
	}
	return true
}

// pruneOutstanding drops the announced changes that have settled, and
// past maxOutstanding the oldest ones: a session of commands that no edit
// waits for must not grow without bound.
func (s *server) pruneOutstanding() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outstanding = slices.DeleteFunc(s.outstanding, func(p *pending) bool {
		done, _ := s.settledLocked([]*pending{p})
		return done || p.gen != s.gen
	})
	if n := len(s.outstanding) - maxOutstanding; n > 0 {
		s.outstanding = slices.Delete(s.outstanding, 0, n)
	}
}

// idleLocked reports whether the server has no work in progress.
func (s *server) idleLocked() bool { return s.state == stateReady && len(s.tokens) == 0 }

// waitIdle waits until the server reports no work in progress (its
// initial workspace load, a diagnosis).
func (s *server) waitIdle(ctx context.Context) bool {
	for {
		s.mu.Lock()
		idle, sig, gone := s.idleLocked(), s.sig, s.state == stateClosed || s.state == stateFailed
		s.mu.Unlock()
		if idle {
			return true
		}
		if gone {
			return false
		}
		select {
		case <-sig:
		case <-ctx.Done():
			return false
		}
	}
}

// acquire takes the server's op slot.
func (s *server) acquire(ctx context.Context) bool {
	select {
	case s.op <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *server) release() { <-s.op }
