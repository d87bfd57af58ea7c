package lspbridge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
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
}

// snapGroup is the part of a snapshot that one server handles.
type snapGroup struct {
	srv    *server
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
			g = &snapGroup{srv: s, done: make(chan struct{})}
			bySrv[s] = g
			snap.groups = append(snap.groups, g)
		}
		g.files = append(g.files, f)
	}
	if len(snap.groups) == 0 {
		return nil
	}
	for _, g := range snap.groups {
		gctx, cancel := context.WithTimeout(ctx, m.cfg.wait())
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
	ctx, cancel := context.WithTimeout(ctx, m.cfg.wait())
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
		if t := m.afterGroup(ctx, start, g, mine, snap.command); t != "" {
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

func (m *Manager) afterGroup(ctx context.Context, start time.Time, g *snapGroup, changes []Change, command bool) string {
	s := g.srv
	select {
	case <-g.done:
	case <-ctx.Done():
		g.cancel()
		<-g.done
	}
	total, perFile := m.cfg.maxErrors()
	r := report{server: s.name(), baseOK: g.baseOK, base: m.base, maxTotal: total, maxFile: perFile, command: command}
	edited := map[string]lineMap{}
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
		r.openOnly, r.others, r.found, r.unscanned = true, len(g.scan.files), g.scan.found, g.scan.truncated
		// An importer's problems from before are counted like the
		// edited files' ("already there"); its lines do not move.
		for _, p := range g.scan.files {
			edited[p] = identityMap()
		}
	}
	var pulled map[string][]Diagnostic
	finish := func(complete bool, why string) string {
		r.notices = s.takeNotices()
		r.complete, r.why = complete, why
		r.elapsed = time.Since(start).Milliseconds()
		before, after := g.withPulled(g.base, s.snapshotDiags(), pulled)
		r.delta = computeDelta(before, after, edited)
		g.closeOpened()
		return r.render()
	}
	var why string
	if s.acquire(ctx) {
		defer s.release()
		if _, err := s.ready(ctx); err != nil {
			why = shortErr(err)
		}
	} else {
		why = cmp.Or(g.why, "another edit was being checked")
	}
	// The new text is synced even when there is no time left to wait: the
	// server's copy must follow the disk (a server still starting gets it
	// when ready).
	var ps []*pending
	for _, c := range changes {
		if g.file(c.Path).unknown {
			continue // not open, and not to be opened: announced by Changed
		}
		p, err := s.syncDoc(ctx, c.Path, c.Content)
		switch {
		case err != nil && why == "":
			why = shortErr(err)
		case err == nil:
			ps = append(ps, p)
		}
	}
	if why != "" {
		return finish(false, why)
	}
	others := g.recheckImporters(ctx)
	if g.basePulled != nil {
		// The pulls below answer once the files are checked: no push
		// to wait for.
		ps = nil
	}
	if !s.waitFor(ctx, append(ps, others...)) {
		if len(others) == 0 || !s.settled(ps) {
			return finish(false, fmt.Sprintf("%s did not answer in time", s.name()))
		}
		// The edited files are checked; some of their importers are not.
		r.othersWhy = "no answer in time"
	}
	if g.basePulled != nil {
		var synced []string
		for _, c := range changes {
			if !g.file(c.Path).unknown {
				synced = append(synced, c.Path)
			}
		}
		var ok bool
		if pulled, ok = g.pull(ctx, synced); !ok || !g.othersOK {
			r.othersWhy = "no answer in time"
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
