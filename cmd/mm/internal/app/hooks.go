package app

import (
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine/hooks"
	"github.com/mm-agent/mm/engine/risk"
)

// hooksFor is the config's hooks for a session in cwd; nil when none.
func (a *App) hooksFor(cwd string) *hooks.Runner {
	conv := func(hs []config.Hook) []hooks.Hook {
		var out []hooks.Hook
		for _, h := range hs {
			hk := hooks.Hook{Command: h.Command, Tools: h.Tools, Timeout: time.Duration(h.Timeout)}
			if h.GuardFile != nil { // a guard agent instead of a command
				hk.Guard, hk.Name = guardAgent(a.cfg, h.GuardFile, risk.DefaultTimeout), guardHookName(h)
			}
			out = append(out, hk)
		}
		return out
	}
	h := a.cfg.Hooks
	return hooks.New(hooks.Config{PreGeneration: conv(h.PreGeneration), PreToolUse: conv(h.PreToolUse), PostToolUse: conv(h.PostToolUse), Env: a.childEnviron()}, cwd)
}
