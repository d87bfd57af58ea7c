package lspbridge

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Manager owns the language servers of a session: at most one per
// (language, root), started on first need or by Warm, shared by every
// tool call, stopped by Close.
type Manager struct {
	cfg   Config
	log   *slog.Logger
	base  string
	langs map[string]string // extension -> language, for servers on PATH

	mu        sync.Mutex
	servers   map[serverKey]*server
	workspace string
	roots     []string // every root Warm was given; the first is workspace
	closed    bool
	// lates are the checks going on after their result was given
	// (late.go), which a later change of their files supersedes.
	lates []*lateItem

	// stopCtx ends the background checks on Close.
	stopCtx context.Context
	stopAll context.CancelFunc

	// wg owns the background work started by Warm and Before.
	wg sync.WaitGroup
}

type serverKey struct{ lang, root string }

// New returns a Manager for cfg. It starts nothing: servers start on
// Warm, or on the first file of their language.
func New(cfg Config) *Manager {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := &Manager{cfg: cfg, log: log, langs: map[string]string{}, servers: map[serverKey]*server{}}
	m.stopCtx, m.stopAll = context.WithCancel(context.Background())
	if cfg.BaseDir != "" {
		m.base = canonical(cfg.BaseDir)
	}
	names := make([]string, 0, len(cfg.Servers))
	for name := range cfg.Servers {
		names = append(names, name)
	}
	sort.Strings(names) // a shared extension goes to the first name
	for _, name := range names {
		sc := cfg.Servers[name]
		if _, ok := sc.binary(); !ok {
			continue
		}
		for _, ext := range sc.Extensions {
			if _, taken := m.langs[ext]; !taken {
				m.langs[ext] = name
			}
		}
	}
	return m
}

// Available reports whether any configured server is on PATH; the lsp tool
// is offered only then.
func (m *Manager) Available() bool { return m != nil && len(m.langs) > 0 }

// Languages lists the languages whose server is on PATH, sorted.
func (m *Manager) Languages() []string {
	var out []string
	for _, l := range m.langs {
		if !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// Handles reports whether a server on PATH handles path's language.
func (m *Manager) Handles(path string) bool {
	_, ok := m.langs[filepath.Ext(path)]
	return m.Available() && ok
}

// Warm starts, in the background, a server for each language found in the
// workspace (a root marker, or a file with its extension within a few
// levels), so the first edit finds it ready. It returns at once. A
// session of several roots warms each: a file of a root without a root
// marker above it is served from that root.
func (m *Manager) Warm(ctx context.Context, workspaceRoot string) {
	if !m.Available() {
		return
	}
	root := canonical(workspaceRoot)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	if m.workspace == "" {
		m.workspace = root
	}
	if !slices.Contains(m.roots, root) {
		m.roots = append(m.roots, root)
	}
	m.mu.Unlock()
	m.spawn(func() {
		for _, file := range sampleFiles(ctx, root, m.langs) {
			m.serverFor(file, true)
		}
	})
}

// sampleFiles finds one file per language in the first levels of root,
// skipping hidden, vendor and node_modules directories.
func sampleFiles(ctx context.Context, root string, langs map[string]string) []string {
	const maxDepth, maxEntries = 3, 5000
	found := map[string]string{}
	entries := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return filepath.SkipDir
		}
		entries++
		if entries > maxEntries || len(found) == len(langs) {
			return filepath.SkipAll
		}
		if d.IsDir() {
			name := d.Name()
			depth := strings.Count(strings.TrimPrefix(p, root), string(filepath.Separator))
			if p != root && (strings.HasPrefix(name, ".") || name == "vendor" || name == "node_modules" || name == "__pycache__" || depth >= maxDepth) {
				return filepath.SkipDir
			}
			return nil
		}
		if lang, ok := langs[filepath.Ext(p)]; ok {
			if _, have := found[lang]; !have {
				found[lang] = p
			}
		}
		return nil
	})
	var out []string
	for _, p := range found {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// serverFor returns the server for path's language and root, starting it
// when start is set; nil when no server handles path.
func (m *Manager) serverFor(path string, start bool) *server {
	lang, ok := m.langs[filepath.Ext(path)]
	if !ok {
		return nil
	}
	sc := m.cfg.Servers[lang]
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	root := findRoot(path, sc.RootMarkers, m.rootOf(path))
	k := serverKey{lang, root}
	if s := m.servers[k]; s != nil || !start {
		return s
	}
	s := newServer(lang, root, sc, m.confine(root), m.log)
	s.files = m.cfg.files()
	m.servers[k] = s
	return s
}

// rootOf is the workspace root that holds path (the first root when
// none does). Called with mu.
func (m *Manager) rootOf(path string) string {
	for _, r := range m.roots {
		if within(r, path) {
			return r
		}
	}
	return m.workspace
}

// confine are the directories whose interpreters the server of root is
// not given to run (Config.VenvRoots): its own root, BaseDir and the
// workspace unless the user trusted the root they lie in, and every
// root not trusted on its own. Called with mu.
func (m *Manager) confine(root string) []string {
	var out []string
	for _, d := range append([]string{root, m.base, m.workspace}, m.roots...) {
		if d != "" && !m.venvTrusted(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// venvTrusted reports whether dir lies in a root whose own config the
// user trusted.
func (m *Manager) venvTrusted(dir string) bool {
	for _, r := range m.cfg.VenvRoots {
		if within(canonical(r), dir) {
			return true
		}
	}
	return false
}

// running lists the servers started so far.
func (m *Manager) running() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].lang+out[i].root < out[j].lang+out[j].root
	})
	return out
}

// Changed tells the servers about files changed on disk behind mm's edit
// tools (by bash): documents mm has open get their new text and every
// path is announced as a watched-file change. It does not wait for
// diagnostics.
func (m *Manager) Changed(ctx context.Context, paths []string) {
	if !m.Available() {
		return
	}
	bySrv := map[*server][]string{}
	for _, s := range m.running() {
		for _, p := range paths {
			if c := canonical(p); within(s.root, c) {
				bySrv[s] = append(bySrv[s], c)
			}
		}
	}
	for s, ps := range bySrv {
		s.filesChanged(ctx, ps)
	}
}

// Close stops every server: shutdown and exit, then SIGKILL to its
// process group, and waits until each process is reaped. The Manager
// cannot be used afterwards.
func (m *Manager) Close(ctx context.Context) error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.stopAll()
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		goSafe(&wg, m.log, "closing "+s.name(), func() { s.close(ctx) }, nil)
	}
	wg.Wait()
	m.wg.Wait()
	return ctx.Err()
}
