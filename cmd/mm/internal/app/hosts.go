package app

import (
	"context"
	"io"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/doctor"
	"github.com/mm-agent/mm/cmd/mm/internal/eval"
	"github.com/mm-agent/mm/cmd/mm/internal/line"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/skills"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/workspace"
)

// LineHost is how the terminal front end builds its sessions from a.
func (a *App) LineHost() line.Host {
	h := line.Host{
		Workspace: func(cwd string, ask permit.Asker) (*workspace.Workspace, *permit.Policy, error) {
			return a.Workspace(cwd, nil, ask)
		},
		Session: func(id, cwd string, env tools.Env, extra []tools.Tool) *engine.Session {
			return a.Session(id, cwd, env, extra...)
		},
		MCP:     a.mcp,
		Notice:  func(show func(string)) { a.notice = show },
		Answer:  a.answer,
		Store:   a.store,
		AskHelp: a.agents.Help(),
		Version: a.version(),
		Getenv:  a.env.Get,
	}
	if dir, err := StateDir(a.env); err == nil {
		h.StateDir = dir
	}
	return h
}

// answer is how a decision agent or a guard agent answers a
// prompt in line mode: at once, without a session; ok is false for a
// chat agent.
func (a *App) answer(ctx context.Context, prompt string, stdout, stderr io.Writer) (code int, ok bool) {
	switch a.cfg.Kind() {
	case config.DecisionAgent:
		return runDecision(ctx, decisionAgent(a.cfg), prompt, stdout, stderr), true
	case config.GuardAgent:
		return runGuard(ctx, a.cfg, prompt, stdout, stderr), true
	}
	return 0, false
}

// mcp starts the config's MCP servers for a session in cwd, as the
// terminal front ends and mm doctor take them.
func (a *App) mcp(ctx context.Context, cwd string) ([]tools.Tool, []string, func()) {
	set := a.mcpConnect(ctx, cwd, nil)
	return set.Tools(), set.Notes, set.Close
}

// DoctorHost is what mm doctor checks of a.
func (a *App) DoctorHost() doctor.Host {
	return doctor.Host{
		Config: a.cfg,
		Trust:  a.trust,
		Client: func(ctx context.Context) (*llm.Client, error) {
			c, _, err := a.conn.Client(ctx)
			return c, err
		},
		FixedPrompt: func(cwd string) (int, []string, error) {
			ws, _, err := a.Workspace(cwd, nil, nil)
			if err != nil {
				return 0, nil, err
			}
			chars, names := a.Session("", cwd, ws).FixedPrompt()
			return chars, names, nil
		},
		LSP:      func(cwd string) (lspbridge.Config, error) { return lspConfig(a.cfg.LSP, cwd) },
		Skills:   a.SkillsFor,
		MCP:      a.mcp,
		StateDir: func() (string, error) { return StateDir(a.env) },
		Sandbox:  a.doctorSandbox(),
		Getenv:   a.env.Get,
	}
}

// EvalHost is what mm eval measures of a: its routers, its skills and
// unsaved sessions of its chat model.
func (a *App) EvalHost() eval.Host {
	return eval.Host{
		ConfigSource: a.cfg.Source,
		SkillRouter:  skillRouter(a.cfg),
		ToolRouter:   toolRouter(a.cfg),
		Skills: func(cwd string) (*skills.Set, decide.Options) {
			set, _, _ := a.SkillsFor(cwd).Current()
			return set, skillOptions(set)
		},
		Session: func(dir string, ask permit.Asker) (*engine.Session, error) {
			ws, _, err := a.Workspace(dir, nil, ask)
			if err != nil {
				return nil, err
			}
			return a.Session(store.NewID(), dir, ws), nil
		},
		Model: a.conn.Model,
	}
}
