package lspbridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Snapshot is the state of the diagnostics before an edit, taken by Before
// and consumed by After. The zero of *Snapshot (nil) stands for "no server
// for these files"; After then returns "".
type Snapshot struct {
	m      *Manager
	groups []*snapGroup
	// command: the change is a command's (ChangedSince), not an edit.
	command bool
	// late receives what the check finds after its result was given.
	late *Late
}

// DeliverLate makes the answers that come after the result of this
// snapshot's check go to l (late.go); without it they are dropped.
func (snap *Snapshot) DeliverLate(l *Late) {
	if snap != nil {
		snap.late = l
	}
}

// snapGroup is the part of a snapshot that one server handles.
type snapGroup struct {
	m      *Manager
	srv    *server
	cold   bool // the server's first check: its initial analysis is waited for
	files  []snapFile
	done   chan struct{} // closed when base is set (or given up)
	cancel context.CancelFunc
	base   map[string][]Diagnostic
	baseOK bool
	why    string
	// For a server that reports open files only: the files that import
	// the edited ones, checked with them (importers.go), and those of them
	// mm opened for the check, closed once it is done.
	scanned bool
	scan    importerScan
	openMu  sync.Mutex // opened is released by a background check
	opened  []string
	// basePulled are the diagnostics before the edit of the edited files
	// and the importers, pulled; nil when the server does not answer pulls
	// (its pushes are used).
	basePulled map[string][]Diagnostic
	othersOK   bool
}

type snapFile struct {
	path    string
	old     []byte
	existed bool
	// unknown: the file changed on disk before mm saw it (a command), so
	// its old text is unknown and its problems are matched anywhere in it.
	unknown bool
}

// Change is a file's content after an edit.
type Change struct {
	Path    string
	Content []byte
}

// Before records the diagnostics of paths before an edit. It returns at
// once: it reads the files and, in the background, makes sure the server
// has their current text and has published their diagnostics (starting
// the server when needed). Call it before writing, and After once written.
func (m *Manager) Before(ctx context.Context, paths ...string) *Snapshot {
	return m.snapshot(ctx, paths, true, func(_ *server, c string) (snapFile, bool) {
		data, err := m.cfg.files().ReadFile(ctx, c)
		return snapFile{path: c, old: data, existed: err == nil}, true
	})
}

// snapshot is Before with the old text of each file given by old, which
// may leave a file out; start says whether to start a server not running.
func (m *Manager) snapshot(ctx context.Context, paths []string, start bool, old func(s *server, path string) (snapFile, bool)) *Snapshot {
	if !m.Available() {
		return nil
	}
	snap := &Snapshot{m: m}
	bySrv := map[*server]*snapGroup{}
	for _, p := range paths {
		c := canonical(p)
		s := m.serverFor(c, start)
		if s == nil {
			continue
		}
		f, ok := old(s, c)
		if !ok {
			continue
		}
		g := bySrv[s]
		if g == nil {
			g = &snapGroup{m: m, srv: s, done: make(chan struct{})}
			bySrv[s] = g
			snap.groups = append(snap.groups, g)
		}
		g.files = append(g.files, f)
	}
	if len(snap.groups) == 0 {
		return nil
	}
	for _, g := range snap.groups {
		var edited []string
		for _, f := range g.files {
			edited = append(edited, f.path)
		}
		m.supersede(g.srv, edited)
		g.cold = g.srv.cold()
		gctx, cancel := context.WithTimeout(ctx, m.checkWait(g.srv))
		g.cancel = cancel
		if !m.spawn(func() { g.takeBase(gctx) }) {
			cancel()
			g.why = "closed"
			close(g.done)
		}
	}
	return snap
}

// Wait blocks until the baseline of every server is taken (or given up
// within Config.Wait), or ctx ends. Call it before writing the files: a
// server that is still starting reads the workspace from disk, and a
// write made before it has seen the old text would slip into the
// baseline, so the delta would report the edit's own lines as "fixed"
// and "introduced".
func (snap *Snapshot) Wait(ctx context.Context) {
	if snap == nil {
		return
	}
	for _, g := range snap.groups {
		select {
		case <-g.done:
		case <-ctx.Done():
			return
		}
	}
}

// Discard releases a snapshot whose edit was not made (the write failed),
// instead of After. Without it the snapshot's background work still ends
// within Config.Wait.
func (snap *Snapshot) Discard() {
	if snap == nil {
		return
	}
	for _, g := range snap.groups {
		g.cancel()
		<-g.done
		g.closeOpened()
	}
}

// spawn runs f on a goroutine owned by the Manager, unless it is closed;
// a panic in f is recovered and logged as one line.
func (m *Manager) spawn(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	goSafe(&m.wg, m.log, "the language server bridge", f, nil)
	return true
}

// takeBase syncs the old texts and waits for their diagnostics.
func (g *snapGroup) takeBase(ctx context.Context) {
	defer close(g.done)
	defer g.cancel()
	s := g.srv
	if !s.acquire(ctx) {
		g.why = "server busy"
		return
	}
	defer s.release()
	if _, err := s.ready(ctx); err != nil {
		g.why = err.Error()
		return
	}
	if g.cold && len(s.cfg.ProgressTitles) > 0 {
		// The first check of a server that reports its work (gopls):
		// its initial load ends first, or the baseline would be taken
		// half-way through it. One that does not (pyright) is waited
		// for by its first publish of the files, below.
		s.waitIdle(ctx)
	}
	var ps []*pending
	for _, f := range g.files {
		if !f.existed {
			continue
		}
		p, err := s.syncDoc(ctx, f.path, f.old)
		if err != nil {
			g.why = err.Error()
			return
		}
		ps = append(ps, p)
	}
	if !s.cfg.Workspace {
		ps = append(ps, g.openImporters(ctx)...)
		if s.pulls() == pullYes {
			// The pulls below answer once the files are checked: no
			// push to wait for.
			ps = nil
		}
	}
	g.baseOK = s.waitFor(ctx, ps)
	if !g.baseOK {
		g.why = "no answer in time"
	}
	g.base = s.snapshotDiags()
	if g.scanned {
		var existed []string
		for _, f := range g.files {
			if f.existed {
				existed = append(existed, f.path)
			}
		}
		g.basePulled, g.othersOK = g.pull(ctx, existed)
	}
}

// After syncs the edited file's new content, waits (bounded by
// Config.Wait) for the diagnostics of that version, and returns the text
// to append to the tool result: what this edit introduced, what it fixed,
// and how many problems were already there. It returns "" when snap is
// nil. snap must come from Before with the one path edited.
func (m *Manager) After(ctx context.Context, snap *Snapshot, newContent []byte) string {
	if snap == nil || len(snap.groups) == 0 || len(snap.groups[0].files) == 0 {
		return ""
	}
	return m.AfterChanges(ctx, snap, []Change{{Path: snap.groups[0].files[0].path, Content: newContent}})
}

// AfterChanges is After for an edit of several files (a rename): changes
// holds each written file's new content.
func (m *Manager) AfterChanges(ctx context.Context, snap *Snapshot, changes []Change) string {
	if snap == nil {
		return ""
	}
	start := time.Now()
	var bound time.Duration
	for _, g := range snap.groups {
		bound = max(bound, m.checkWait(g.srv))
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var parts []string
	for _, g := range snap.groups {
		var mine []Change
		for _, c := range changes {
			cp := canonical(c.Path)
			if g.has(cp) {
				mine = append(mine, Change{Path: cp, Content: c.Content})
			}
		}
		if len(mine) == 0 {
			g.cancel()
			<-g.done
			g.closeOpened()
			continue
		}
		if t := m.afterGroup(ctx, start, g, mine, snap.command, snap.late); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

func (g *snapGroup) has(path string) bool {
	for _, f := range g.files {
		if f.path == path {
			return true
		}
	}
	return false
}

func (g *snapGroup) file(path string) snapFile {
	for _, f := range g.files {
		if f.path == path {
			return f
		}
	}
	return snapFile{path: path}
}

// check is one server's part of an edit's check, as far as the edit's
// result went: what a background check (late.go) needs to go on.
type check struct {
	g       *snapGroup
	r       report
	start   time.Time
	changes []Change
	edited  map[string]lineMap
	ps      []*pending // the edited files' versions sent
	others  []*pending // the importers sent again
	synced  []string   // the edited files whose text was sent
	unsent  bool       // a text was kept for a server still starting
	shown   map[string]bool
}

func (m *Manager) afterGroup(ctx context.Context, start time.Time, g *snapGroup, changes []Change, command bool, late *Late) string {
	s := g.srv
	select {
	case <-g.done:
	case <-ctx.Done():
		g.cancel()
		<-g.done
	}
	total, perFile := m.cfg.maxErrors()
	c := &check{g: g, start: start, changes: changes, edited: map[string]lineMap{}}
	c.r = report{server: s.name(), baseOK: g.baseOK, base: m.base, maxTotal: total, maxFile: perFile, command: command}
	r := &c.r
	edited := c.edited
	for _, c := range changes {
		r.edited = append(r.edited, c.Path)
		switch f := g.file(c.Path); {
		case f.unknown:
			edited[c.Path] = wholeFileMap()
		case f.existed:
			edited[c.Path] = newLineMap(f.old, c.Content)
		default:
			edited[c.Path] = identityMap()
		}
	}
	if g.scanned {
		r.openOnly, r.others, r.found, r.unscanned, r.cut = true, len(g.scan.files), g.scan.found, g.scan.truncated, g.scan.cut
		// An importer's problems from before are counted like the
		// edited files' ("already there"); its lines do not move.
		for _, p := range g.scan.files {
			edited[p] = identityMap()
		}
		if g.scan.cut {
			// Some importers may not have been found: the check goes on
			// in the background, which looks again.
			r.othersWhy = "no time left to look"
		}
	}
	var pulled map[string][]Diagnostic
	// resumable: the check may go on in the background (the server is
	// alive, only slow).
	resumable := true
	// starting: the server has not finished its handshake yet (its
	// reason says so).
	starting := false
	finish := func(complete bool, why string) string {
		r.notices = s.takeNotices()
		r.complete, r.why = complete, why
		r.elapsed = time.Since(start).Milliseconds()
		before, after := g.withPulled(g.base, s.snapshotDiags(), pulled)
		r.delta = computeDelta(before, after, edited)
		if complete && r.othersWhy == "" {
			s.recordWait(time.Since(start))
		}
		// A server busy with work of its own, or whose first analysis
		// (this first check waited for it) is not over, says so: its
		// silence is no answer about the edit.
		if resumable && !starting && (s.indexing() || g.cold) {
			busy := s.name() + " is still indexing the workspace"
			if !complete {
				r.why = busy
			} else if r.othersWhy != "" {
				r.othersWhy = busy
			}
		}
		text := r.render()
		if late != nil && resumable && (!complete || r.othersWhy != "") {
			c.shown = r.listed()
			m.goLate(late, c)
		} else {
			g.closeOpened()
		}
		return text
	}
	var why string
	if s.acquire(ctx) {
		defer s.release()
		if _, err := s.ready(ctx); err != nil {
			why = shortErr(err)
			resumable = errors.Is(err, ErrNotReady)
			starting = resumable
		}
	} else {
		why = cmp.Or(g.why, "another edit was being checked")
	}
	// The new text is synced even when there is no time left to wait: the
	// server's copy must follow the disk (a server still starting gets it
	// when ready).
	for _, ch := range changes {
		if g.file(ch.Path).unknown {
			continue // not open, and not to be opened: announced by Changed
		}
		p, err := s.syncDoc(ctx, ch.Path, ch.Content)
		switch {
		case err != nil && why == "":
			why = shortErr(err)
			resumable = errors.Is(err, ErrNotReady)
		case err == nil:
			c.ps = append(c.ps, p)
		default:
			c.unsent = true
		}
		c.synced = append(c.synced, ch.Path)
	}
	if why != "" {
		return finish(false, why)
	}
	c.others = g.recheckImporters(ctx)
	if g.basePulled != nil {
		// The pulls below answer once the files are checked: no push
		// to wait for.
		c.ps = nil
	}
	if !s.waitFor(ctx, append(slices.Clip(c.ps), c.others...)) {
		if len(c.others) == 0 || !s.settled(c.ps) {
			return finish(false, fmt.Sprintf("%s did not answer in time", s.name()))
		}
		// The edited files are checked; some of their importers are not.
		r.othersWhy = "no answer in time"
	}
	if g.basePulled != nil {
		var ok bool
		if pulled, ok = g.pull(ctx, c.synced); !ok || !g.othersOK {
			r.othersWhy = "no answer in time"
		}
		for _, p := range c.synced {
			if _, ok := pulled[p]; !ok {
				// Its older pushes would say "no problems" for a file
				// the server has not checked.
				return finish(false, fmt.Sprintf("%s did not answer in time", s.name()))
			}
		}
	}
	return finish(true, "")
}

// shortErr is an error's text without the sentinel's prefix.
func shortErr(err error) string {
	for _, e := range []error{ErrNotReady, ErrServerFailed, ErrClosed} {
		if errors.Is(err, e) {
			if rest, ok := strings.CutPrefix(err.Error(), e.Error()+": "); ok {
				return rest
			}
		}
	}
	return err.Error()
}
