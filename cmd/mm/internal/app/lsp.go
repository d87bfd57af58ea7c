package app

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/fileedit/disk"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/tools"
)

// lspConfig merges the config's lsp: block over the defaults (gopls,
// pyright): a known language takes the given command and root markers, a
// new one needs its extensions too.
func lspConfig(cfg map[string]config.LSP, cwd string) (lspbridge.Config, error) {
	c := lspbridge.DefaultConfig()
	c.Servers = maps.Clone(c.Servers)
	c.BaseDir = cwd
	for lang, l := range cfg {
		s, known := c.Servers[lang]
		if len(l.Command) > 0 {
			s.Command = l.Command
		}
		if len(l.RootMarkers) > 0 {
			s.RootMarkers = l.RootMarkers
		}
		if len(l.Extensions) > 0 {
			s.Extensions = l.Extensions
		}
		if !known && (len(s.Command) == 0 || len(s.Extensions) == 0) {
			return c, fmt.Errorf("lsp.%s needs command and extensions (e.g. extensions: [.ts, .tsx])", lang)
		}
		c.Servers[lang] = s
	}
	return c, nil
}

// lspFor returns the language servers of a workspace whose roots are
// roots (the first is the sessions' cwd), started in the background on
// first use and shared by its sessions: one per language and
// project root, in every root.
func (a *App) lspFor(roots ...string) *lspbridge.Manager {
	if a.parent != nil {
		// An asked agent queries the caller's servers: one gopls per
		// workspace, fed the same file view.
		return a.parent.lspFor(roots...)
	}
	cwd, key := roots[0], strings.Join(roots, "\x00")
	// Trusting a root's config is read from disk: not under the lock.
	venv := a.venvRoots(roots)
	a.mu.Lock()
	defer a.mu.Unlock()
	if m, ok := a.lsp[key]; ok {
		return m
	}
	cfg, err := lspConfig(a.cfg.LSP, cwd)
	if err != nil {
		a.log.Warn("language servers off", "err", err)
		cfg = lspbridge.Config{}
	}
	cfg.Logger = a.log
	cfg.Files = a.filesForLocked(cwd)
	cfg.VenvRoots = venv
	for name, sc := range cfg.Servers {
		sc.Env = a.childEnviron()
		cfg.Servers[name] = sc
	}
	m := lspbridge.New(cfg)
	if m.Available() && !a.lspCold {
		for _, r := range roots {
			m.Warm(context.Background(), r)
		}
		a.log.Info("language servers", "languages", m.Languages())
	}
	if a.lsp == nil {
		a.lsp = map[string]*lspbridge.Manager{}
	}
	a.lsp[key] = m
	return m
}

// venvRoots are the roots whose .venv/bin/python may run (a program the
// repository chose; pyright runs the interpreter it is given): those
// whose own .mm/agent.yaml the user trusted, each on its own — trusting
// one root trusts nothing of another.
func (a *App) venvRoots(roots []string) []string {
	var out []string
	for _, r := range roots {
		if a.trustedRoot(r) {
			out = append(out, r)
		}
	}
	return out
}

// trustedRoot reports whether the user trusted dir's own .mm/agent.yaml
// as it is now: the config mm loaded when it is dir's, else dir's read
// for its trust alone (never applied).
func (a *App) trustedRoot(dir string) bool {
	if t := a.trust; t != nil && t.Workspace && tools.Real(filepath.Dir(filepath.Dir(t.Path))) == tools.Real(dir) {
		return t.Trusted
	}
	if _, err := os.Stat(filepath.Join(dir, ".mm", "agent.yaml")); err != nil {
		return false
	}
	_, t, err := config.LoadFor(a.env, "", dir, TrustFile(a.env), nil)
	return err == nil && t != nil && t.Workspace && t.Trusted
}

// closeLSP stops every language server (shutdown, exit, then the process
// group), bounded so that mm exits promptly.
func (a *App) closeLSP() {
	a.mu.Lock()
	ms := maps.Clone(a.lsp)
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, m := range ms {
		if err := m.Close(ctx); err != nil {
			a.log.Warn("language server shutdown", "err", err)
		}
	}
}

// sessionFiles is the view of files the language servers of a workspace
// read through: the view of the workspace's latest session. An
// editor's sessions share one set of buffers, so any of them gives the
// same text; line mode's is the disk.
type sessionFiles struct {
	mu  sync.Mutex
	cur tools.Files
}

func (f *sessionFiles) use(v tools.Files) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cur = v
}

// ReadFile implements lspbridge.Files; the lock is not held across the read.
func (f *sessionFiles) ReadFile(ctx context.Context, path string) ([]byte, error) {
	f.mu.Lock()
	cur := f.cur
	f.mu.Unlock()
	if cur == nil {
		return disk.Read(ctx, "", path, disk.MaxSource)
	}
	return cur.ReadFile(ctx, path)
}

// filesFor returns the view the servers of cwd read through.
func (a *App) filesFor(cwd string) *sessionFiles {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.filesForLocked(cwd)
}

func (a *App) filesForLocked(cwd string) *sessionFiles {
	if a.views == nil {
		a.views = map[string]*sessionFiles{}
	}
	v, ok := a.views[cwd]
	if !ok {
		v = &sessionFiles{}
		a.views[cwd] = v
	}
	return v
}
