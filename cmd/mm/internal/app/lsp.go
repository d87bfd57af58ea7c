package app

import (
	"context"
	"fmt"
	"maps"
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

// lspFor returns the language servers of a workspace, started in the
// background on first use and shared by its sessions (L1).
func (a *App) lspFor(cwd string) *lspbridge.Manager {
	if a.parent != nil {
		// An asked agent (E36) queries the caller's servers: one gopls per
		// workspace, fed the same file view.
		return a.parent.lspFor(cwd)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if m, ok := a.lsp[cwd]; ok {
		return m
	}
	cfg, err := lspConfig(a.cfg.LSP, cwd)
	if err != nil {
		a.log.Warn("language servers off", "err", err)
		cfg = lspbridge.Config{}
	}
	cfg.Logger = a.log
	cfg.Files = a.filesForLocked(cwd)
	// A .venv/bin/python that is a file of the repository is a program
	// the repository chose, and pyright runs the interpreter it is given:
	// it is given only once the user has trusted the workspace.
	cfg.RunVenv = a.Trust != nil && a.Trust.Workspace && a.Trust.Trusted
	for name, sc := range cfg.Servers {
		sc.Env = a.childEnviron()
		cfg.Servers[name] = sc
	}
	m := lspbridge.New(cfg)
	if m.Available() && !a.LSPCold {
		m.Warm(context.Background(), cwd)
		a.log.Info("language servers", "languages", m.Languages())
	}
	if a.lsp == nil {
		a.lsp = map[string]*lspbridge.Manager{}
	}
	a.lsp[cwd] = m
	return m
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
// read through (A8): the view of the workspace's latest session. An
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
