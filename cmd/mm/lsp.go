package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/mm-agent/mm/cmd/mm/config"
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
func (a *app) lspFor(cwd string) *lspbridge.Manager {
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
	m := lspbridge.New(cfg)
	if m.Available() {
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
func (a *app) closeLSP() {
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

// afterCommands decorates a tool that may change files behind the
// editor's back (bash): once it ran, the language servers are told which
// files of their roots changed (L3), so later diagnostics are true.
type afterCommands struct {
	tools.Tool
	m *lspbridge.Manager
}

func (t afterCommands) Run(ctx context.Context, env tools.Env, args json.RawMessage) (tools.Result, error) {
	start := time.Now()
	res, err := t.Tool.Run(ctx, env, args)
	if err == nil {
		t.m.ChangedSince(ctx, start)
	}
	return res, err
}
