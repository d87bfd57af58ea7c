package app

import (
	"context"
	"strings"

	"github.com/mm-agent/mm/acp"
	"github.com/mm-agent/mm/cmd/mm/internal/agents"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/tools"
)

// newAskedAgents builds the agents of a's config, each with an app
// of its own built from its file; an asked agent's own config has none
// (depth 1: agents never loop asking each other).
func newAskedAgents(a *App) (agents.Set, []*App) {
	var set agents.Set
	var apps []*App
	for _, name := range a.cfg.Agents.Names() {
		f := *a.cfg.Agents[name].Config // a copy: the caller's config stays as loaded
		if f.BaseURL == "" {
			// Without a server of its own it is another model of the
			// caller's server (as a decision agent's client does).
			f.BaseURL, f.APIKey = a.cfg.BaseURL, a.cfg.APIKey
			if f.Provider == "" {
				f.Provider = a.cfg.Provider
			}
		}
		off := false
		f.BashTool, f.EditTools, f.PlanTool = &off, &off, &off // read-only (config.checkAsked refused them on)
		// The agent's own connector (its own connection to its server),
		// profile and skills; it shares only the workspace's language
		// servers with the app that asks (see lspFor).
		child := build(Options{Config: &f, Env: a.env, Log: a.log.With("agent", name)}, a)
		about := strings.TrimSpace(f.Description)
		switch {
		case about != "":
		case f.Model != "":
			about = "model " + f.Model
		default:
			about = "another model"
		}
		set = append(set, agents.New(name, about, func(cwd string, env tools.Env) *engine.Session { return child.Session("", cwd, env) }))
		apps = append(apps, child)
	}
	return set, apps
}

// closeAgents stops the asked agents' connectors.
func (a *App) closeAgents() {
	for _, c := range a.agentApps {
		c.conn.Close()
	}
}

// askCommands are the /ask-<name> commands of the editor's / menu.
func (a *App) askCommands() []acp.Command {
	var cmds []acp.Command
	for _, g := range a.agents {
		cmds = append(cmds, acp.Command{Name: "ask-" + g.Name(), Description: "Ask the " + g.Name() + " agent (" + g.About() + ") one question", Hint: "question"})
	}
	return cmds
}

// commands is the editor's / menu beyond the built-in commands: one
// /ask-<name> per agent, then one command per skill of the workspace.
func (a *App) commands(ctx context.Context, announce func(cwd string)) func(cwd string) []acp.Command {
	skills := a.skillCommands(ctx, announce)
	return func(cwd string) []acp.Command {
		return append(append(a.trustCommand(), a.askCommands()...), skills(cwd)...)
	}
}
