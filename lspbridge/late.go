package lspbridge

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// On a busy machine a server may answer an edit's check after the edit's
// result was given to the model. That answer is not dropped: the check
// goes on in the background (bounded by lateWait), and what it finds is
// handed, once, to the session whose edit it was — before its next tool
// result, or before its turn ends (the engine asks). A later edit or
// command that touches one of the files the check covers supersedes it,
// and an answer about files that changed since it was computed is
// dropped: the model never reads a state older than the one it made.

// Late is one session's inbox of those answers. The zero value is not
// usable: NewLate makes one. A nil *Late collects nothing (the check ends
// with its result, as before).
type Late struct {
	mu    sync.Mutex
	items []*lateItem
	sig   chan struct{} // closed and replaced when an item ends
}

// NewLate returns an empty inbox.
func NewLate() *Late { return &Late{sig: make(chan struct{})} }

// lateItem is one check that went on after its result was given.
type lateItem struct {
	late   *Late
	srv    *server
	g      *snapGroup
	files  []string // the edited files and the importers checked with them
	cancel context.CancelFunc

	// Guarded by late.mu.
	ended      bool
	superseded bool
	delivered  bool
	text       string
	errors     bool              // text lists new errors
	seen       map[string][]byte // the text of each file the answer is about
}

// add records an item still running.
func (l *Late) add(it *lateItem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Items delivered, superseded or ended empty are of no more use.
	l.items = slices.DeleteFunc(l.items, func(o *lateItem) bool {
		return o.delivered || o.superseded || o.ended && o.text == ""
	})
	l.items = append(l.items, it)
}

// end records what an item found and wakes Checkpoint.
func (l *Late) end(it *lateItem, text string, errors bool, seen map[string][]byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	it.ended, it.text, it.errors, it.seen = true, text, errors, seen
	close(l.sig)
	l.sig = make(chan struct{})
}

// supersede drops an item whose files a later change touches.
func (l *Late) supersede(it *lateItem) {
	l.mu.Lock()
	defer l.mu.Unlock()
	it.superseded = true
	close(l.sig)
	l.sig = make(chan struct{})
}

// Take returns, once, what the checks that ended since the last call
// found ("" when nothing): the text to put before the next tool result.
// It does not wait.
func (l *Late) Take(ctx context.Context) string {
	text, _ := l.take(ctx, false)
	return text
}

// Checkpoint is for the end of a turn: it waits, at most bound, for the
// checks still running, and returns the new errors they found ("" when
// none). An answer without new errors is dropped: it gives the model
// nothing to react to, and the turn is over.
func (l *Late) Checkpoint(ctx context.Context, bound time.Duration) string {
	if l == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		l.mu.Lock()
		running, sig := false, l.sig
		for _, it := range l.items {
			if !it.ended && !it.superseded {
				running = true
			}
		}
		l.mu.Unlock()
		if !running {
			break
		}
		select {
		case <-sig:
		case <-ctx.Done():
			// Past the bound: what has come so far is given.
			text, _ := l.take(context.WithoutCancel(ctx), true)
			return text
		}
	}
	text, _ := l.take(ctx, true)
	return text
}

// Pending reports whether a check is still running or has an answer not
// given yet.
func (l *Late) Pending() bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, it := range l.items {
		if !it.superseded && !it.delivered && (!it.ended || it.text != "") {
			return true
		}
	}
	return false
}

// take collects the ended items not given yet, drops those whose files
// changed since, and marks them given. errorsOnly drops the answers
// without new errors.
func (l *Late) take(ctx context.Context, errorsOnly bool) (string, int) {
	if l == nil {
		return "", 0
	}
	l.mu.Lock()
	var ready []*lateItem
	for _, it := range l.items {
		if it.ended && !it.superseded && !it.delivered && it.text != "" {
			it.delivered = true
			ready = append(ready, it)
		}
	}
	l.mu.Unlock()
	var parts []string
	for _, it := range ready {
		if errorsOnly && !it.errors || it.stale(ctx) {
			continue
		}
		parts = append(parts, it.text)
	}
	return strings.Join(parts, "\n"), len(parts)
}

// stale reports whether a file the answer is about has changed since the
// answer was computed: the model has moved on, and its later check says
// what is true now.
func (it *lateItem) stale(ctx context.Context) bool {
	files := it.srv.files
	if files == nil {
		files = onDisk{}
	}
	for p, was := range it.seen {
		now, err := files.ReadFile(ctx, p)
		if err != nil || !bytes.Equal(now, was) {
			return true
		}
	}
	return false
}

// covers reports whether the item's check is about one of paths.
func (it *lateItem) covers(paths []string) bool {
	for _, p := range paths {
		if slices.Contains(it.files, p) {
			return true
		}
	}
	return false
}

// supersede ends the background checks of s that a change of paths makes
// out of date. The paths stay open in the server, whichever check opened
// them: they are being edited.
func (m *Manager) supersede(s *server, paths []string) {
	m.mu.Lock()
	var hit []*lateItem
	m.lates = slices.DeleteFunc(m.lates, func(it *lateItem) bool {
		if it.srv == s && it.covers(paths) {
			hit = append(hit, it)
			return true
		}
		return false
	})
	m.mu.Unlock()
	for _, it := range hit {
		for _, p := range paths {
			it.g.keepOpen(p)
		}
		it.late.supersede(it)
		it.cancel()
	}
}

// adopt moves to g a document of s that a background check holds open,
// so that g, which checks it too, closes it when done, not the other.
func (m *Manager) adopt(s *server, path string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, it := range m.lates {
		if it.srv == s && it.g.keepOpen(path) {
			return true
		}
	}
	return false
}

// forget removes an ended item from the Manager's list.
func (m *Manager) forget(it *lateItem) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lates = slices.DeleteFunc(m.lates, func(o *lateItem) bool { return o == it })
}

// goLate goes on with a check whose result was given incomplete: it waits
// (bounded by lateWait from the edit) for ps and others, pulls when the
// server answers pulls, and hands what the edit introduced beyond what
// the result listed to late. The group's opened importers stay open until
// it ends.
func (m *Manager) goLate(late *Late, c *check) {
	ctx, cancel := context.WithDeadline(m.stopCtx, c.start.Add(m.lateWait()))
	it := &lateItem{late: late, srv: c.g.srv, g: c.g, cancel: cancel}
	it.files = append(it.files, c.r.edited...)
	it.files = append(it.files, c.g.scan.files...)
	late.add(it)
	m.mu.Lock()
	m.lates = append(m.lates, it)
	m.mu.Unlock()
	ok := m.spawn(func() {
		defer cancel()
		defer m.forget(it)
		text, errs, seen := c.resume(ctx)
		if ctx.Err() != nil && text == "" {
			m.log.Debug("late diagnostics not in time", "server", c.g.srv.name(), "files", it.files)
		}
		late.end(it, text, errs, seen)
	})
	if !ok {
		cancel()
		m.forget(it)
		late.end(it, "", false, nil)
		c.g.closeOpened()
	}
}

// resume is the background part of a check: its end, past the wait of
// the edit's result. It returns the text for the model ("" when nothing
// came in time), whether it lists new errors, and the text of the files
// it is about.
func (c *check) resume(ctx context.Context) (string, bool, map[string][]byte) {
	g, s := c.g, c.g.srv
	defer g.closeOpened()
	if _, err := s.ready(ctx); err != nil {
		return "", false, nil
	}
	if !g.baseOK || g.basePulled != nil && !g.othersOK || g.scan.cut {
		// What was there before the edit is not known (the server was
		// starting, or busy with its first analysis, or the search for
		// importers ran out of time): it is asked now, or every problem
		// the edit's files and their importers have would be new — or,
		// for an importer, left out.
		if !c.rebase(ctx) {
			return "", false, nil
		}
	}
	ps := slices.Clip(c.ps)
	if c.unsent && g.basePulled == nil {
		// The server was starting when the edit was synced: it got the
		// text when ready; its version then is the one to wait for.
		for _, p := range c.synced {
			if pend := s.sentVersion(p); pend != nil {
				ps = append(ps, pend)
			}
		}
	}
	if !s.waitFor(ctx, append(ps, c.others...)) {
		return "", false, nil
	}
	var pulled map[string][]Diagnostic
	if g.basePulled != nil {
		var ok bool
		if pulled, ok = g.pull(ctx, c.synced); !ok {
			return "", false, nil
		}
	}
	s.recordWait(time.Since(c.start))
	before, after := g.withPulled(g.base, s.snapshotDiags(), pulled)
	d := computeDelta(before, after, c.edited)
	var fresh []Diagnostic
	for _, e := range d.added {
		if e.Severity == SeverityError && !c.shown[e.shownKey()] {
			fresh = append(fresh, e)
		}
	}
	seen := map[string][]byte{}
	for _, ch := range c.changes {
		seen[ch.Path] = ch.Content
	}
	for _, e := range fresh {
		if _, ok := seen[e.Path]; ok {
			continue
		}
		if text, open := s.docText(e.Path); open {
			seen[e.Path] = text
		} else if text, err := s.files.ReadFile(ctx, e.Path); err == nil {
			seen[e.Path] = text
		}
	}
	r := c.r
	r.othersWhy = ""
	what := fmt.Sprintf("%s: diagnostics that arrived after your %s of %s", s.name(), r.cause(), r.editedNames())
	if len(fresh) == 0 {
		scope := ""
		if r.openOnly {
			scope = " (" + r.othersChecked() + ")"
		}
		return fmt.Sprintf("%s: no new errors%s", what, scope), false, seen
	}
	r.sortDiags(fresh)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s:\n", what, count(len(fresh), "new error"))
	r.list(&b, fresh)
	if !r.baseOK {
		fmt.Fprintf(&b, "(the diagnostics from before this %s were incomplete: some of the above may be older)\n", r.cause())
	}
	return strings.TrimRight(b.String(), "\n"), true, seen
}

// sentVersion is a pending for the version of path the server has now
// (nil when it does not have it open), sending nothing.
func (s *server) sentVersion(path string) *pending {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.docs[path]
	if d == nil {
		return nil
	}
	return &pending{path: path, version: d.version, gen: d.gen, idx: -1, sentSeq: d.sentSeq}
}

// listed is what the result showed of the errors, by shownKey: a late
// answer lists only the others. The errors past the list's bound were
// counted in it, so they count as shown.
func (r report) listed() map[string]bool {
	out := map[string]bool{}
	for _, d := range r.delta.added {
		if d.Severity == SeverityError {
			out[d.shownKey()] = true
		}
	}
	return out
}

// shownKey identifies a problem as the model read it.
func (d Diagnostic) shownKey() string {
	return fmt.Sprintf("%s:%d:%d:%s", d.Path, d.Line, d.Column, d.Message)
}

// rebase takes again, late, the baseline the edit's check could not take
// in time: the server is given the edited files' text from before the
// edit, and the importers' (opened now when they were not), and answers
// for that state; then the edit's text again, whose answer resume waits
// for. It holds the server's op slot, so no other check reads the server
// while it holds the old text. It reports false when ctx ended first.
func (c *check) rebase(ctx context.Context) bool {
	g, s := c.g, c.g.srv
	if !s.acquire(ctx) {
		return false
	}
	defer s.release()
	if g.cold && len(s.cfg.ProgressTitles) > 0 && !s.waitIdle(ctx) {
		return false
	}
	var existed []string
	var pends []*pending
	// The edit's text goes back to the server whatever happens: a check
	// cut short (superseded, or past its bound) must not leave it, or the
	// next check's baseline, with the text from before the edit.
	var flipped []Change
	defer func() {
		for _, ch := range flipped {
			_, _ = s.syncDoc(context.WithoutCancel(ctx), ch.Path, ch.Content)
			s.setCurrent(ch.Path, nil)
		}
	}()
	for _, ch := range c.changes {
		f := g.file(ch.Path)
		if !f.existed || f.unknown {
			continue
		}
		s.setCurrent(ch.Path, ch.Content)
		flipped = append(flipped, ch)
		p, err := s.syncDoc(ctx, f.path, f.old)
		if err != nil {
			return false
		}
		pends = append(pends, p)
		existed = append(existed, f.path)
	}
	if !s.cfg.Workspace {
		var opened []*pending
		if !g.scanned || g.scan.cut {
			// Not searched, or the search ran out of time: done whole
			// now, with this check's own bound.
			opened = g.openImporters(ctx)
			pends = append(pends, opened...)
		}
		for _, p := range g.scan.files {
			if slices.ContainsFunc(opened, func(o *pending) bool { return o.path == p }) {
				continue // just opened with the state to compare with
			}
			if text, open := s.docText(p); open {
				if pend, err := s.recheckDoc(ctx, p, text); err == nil {
					pends = append(pends, pend)
				}
			}
		}
		if s.pulls() == pullYes {
			pends = nil
		}
	}
	if !s.waitFor(ctx, pends) {
		return false
	}
	g.base, g.baseOK = s.snapshotDiags(), true
	if g.scanned {
		if g.basePulled, g.othersOK = g.pull(ctx, existed); !g.othersOK {
			return false
		}
	}
	c.ps, c.synced, c.unsent = nil, nil, false
	for _, ch := range c.changes {
		if g.file(ch.Path).unknown {
			continue
		}
		p, err := s.syncDoc(ctx, ch.Path, ch.Content)
		if err != nil {
			return false
		}
		s.setCurrent(ch.Path, nil)
		c.ps = append(c.ps, p)
		c.synced = append(c.synced, ch.Path)
	}
	flipped = nil
	c.others = g.recheckImporters(ctx)
	if g.basePulled != nil {
		c.ps = nil
	}
	r := &c.r
	r.baseOK = true
	if g.scanned {
		r.openOnly, r.others, r.found, r.unscanned, r.cut = true, len(g.scan.files), g.scan.found, g.scan.truncated, g.scan.cut
		for _, p := range g.scan.files {
			c.edited[p] = identityMap()
		}
	}
	return true
}
