package main

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"

	"github.com/mm-agent/mm/acp"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/ask"
)

// askedAgent is one entry of the config's agents: (E36): another agent
// file the chat model (ask_<name>) and the user (/ask-<name>) can put one
// question to. It answers in a session of its own, built from its file —
// provider, server, model, sampling, system prompt, skills, hooks — with
// no history but the question, and read-only tools.
type askedAgent struct {
	name, about string
	// app is the agent's own composition: its connector (its own
	// connection to its server), profile and skills; it shares only the
	// workspace's language servers with the app that asks (see lspFor).
	app *app
	// asks numbers the questions, so that the permission questions of
	// different asks never share a tool call id in the editor.
	asks atomic.Int64
}

// newAskedAgents builds the agents of a's config; an asked agent's own
// config has none (depth 1: agents never loop asking each other).
func newAskedAgents(a *app) []*askedAgent {
	var out []*askedAgent
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
		child := newApp(&f, a.log.With("agent", name), nil)
		child.parent = a
		about := strings.TrimSpace(f.Description)
		switch {
		case about != "":
		case f.Model != "":
			about = "model " + f.Model
		default:
			about = "another model"
		}
		out = append(out, &askedAgent{name: name, about: about, app: child})
	}
	return out
}

// closeAgents stops the asked agents' connectors.
func (a *app) closeAgents() {
	for _, g := range a.agents {
		g.app.conn.Close()
	}
}

// askTools are the ask_<name> tools of the config's agents.
func (a *app) askTools() []tools.Tool {
	var ts []tools.Tool
	for _, g := range a.agents {
		ts = append(ts, ask.New(ask.Options{Name: g.name, About: g.about, Ask: g.tool}))
	}
	return ts
}

// askCommands are the /ask-<name> commands of the editor's / menu (A5).
func (a *app) askCommands() []acp.Command {
	var cmds []acp.Command
	for _, g := range a.agents {
		cmds = append(cmds, acp.Command{Name: "ask-" + g.name, Description: "Ask the " + g.name + " agent (" + g.about + ") one question", Hint: "question"})
	}
	return cmds
}

// commands is the editor's / menu beyond the built-in commands (A5): one
// /ask-<name> per agent, then one command per skill of the workspace.
func (a *app) commands(ctx context.Context, announce func(cwd string)) func(cwd string) []acp.Command {
	skills := a.skillCommands(ctx, announce)
	return func(cwd string) []acp.Command {
		return append(append(a.trustCommand(), a.askCommands()...), skills(cwd)...)
	}
}

// tool is ask_<name>'s Run: the answer as the tool result, a failure as
// one repair line.
func (g *askedAgent) tool(ctx context.Context, env tools.Env, question string) (tools.Result, error) {
	answer, failed, err := g.ask(ctx, env, question)
	switch {
	case err != nil:
		return tools.Result{}, err
	case failed != "":
		return tools.Result{Text: fmt.Sprintf("[error: the %s agent could not answer: %s — go on without it, or tell the user]", g.name, failed), IsError: true,
			Warning: g.name + " agent: " + failed}, nil
	}
	return tools.Result{Text: answer}, nil
}

// ask runs the agent's own turn on the question alone and returns its
// final answer — what it would say in the editor, whatever kind of agent
// its file is (the session's rewriter answers for a decision agent), its
// reasoning left out — or one line saying why there is none. err is set
// only when ctx ended: the caller's cancel cancels the asked turn.
func (g *askedAgent) ask(ctx context.Context, env tools.Env, question string) (answer, failed string, err error) {
	ro := &readOnly{Env: env, name: g.name, reads: tools.NewReadTracker(), prefix: fmt.Sprintf("ask-%s-%d-", g.name, g.asks.Add(1))}
	s := g.app.session("", env.Cwd(), ro)
	var text strings.Builder
	end := s.Run(ctx, question, func(e engine.Event) {
		switch e := e.(type) {
		case engine.Text:
			text.WriteString(e.Text)
		case engine.ToolStarted:
			text.Reset() // what it said before a call is not its answer
			env.Progress(g.name + ": " + e.Title)
		}
	})
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	answer = strings.TrimSpace(text.String())
	switch {
	case end.Reason == engine.Failed:
		return "", end.Err, nil
	case answer == "":
		why := string(end.Reason)
		if end.Err != "" {
			why += ": " + end.Err
		}
		return "", "it ended without answering (" + why + ")", nil
	case end.Reason == engine.MaxTurns:
		answer += fmt.Sprintf("\n[the %s agent reached its limit of steps: this answer may be incomplete]", g.name)
	}
	return answer, "", nil
}

// withAsk answers "/ask-<name> question" (E36, A5) with the other agent's
// answer, which the user sees. The exchange is kept in the conversation
// (engine.Rewrite.Keep): the user asked inside this conversation, so the
// chat model must see the question and the answer next turn ("use what
// the historian said") — the asked agent itself remembers nothing.
func (a *app) withAsk(env tools.Env, next func(context.Context, string) engine.Rewrite) func(context.Context, string) engine.Rewrite {
	if len(a.agents) == 0 {
		return next
	}
	return func(ctx context.Context, prompt string) engine.Rewrite {
		cmd, question, _ := strings.Cut(strings.TrimSpace(prompt), " ")
		name, ok := strings.CutPrefix(cmd, "/ask-")
		if !ok {
			if next == nil {
				return engine.Rewrite{Prompt: prompt}
			}
			return next(ctx, prompt)
		}
		var g *askedAgent
		var names []string
		for _, c := range a.agents {
			names = append(names, "/ask-"+c.name)
			if c.name == name {
				g = c
			}
		}
		question = strings.TrimSpace(question)
		switch {
		case g == nil:
			return engine.Rewrite{Answer: fmt.Sprintf("mm: no agent named %q — the config's agents: %s", name, strings.Join(names, ", "))}
		case question == "":
			return engine.Rewrite{Answer: fmt.Sprintf("mm: /ask-%s needs a question, e.g. /ask-%s why was the parser rewritten?", name, name)}
		}
		answer, failed, err := g.ask(ctx, env, question)
		switch {
		case err != nil:
			return engine.Rewrite{} // cancelled: the engine ends the turn so
		case failed != "":
			return engine.Rewrite{Answer: fmt.Sprintf("mm: the %s agent could not answer: %s", name, failed)}
		}
		return engine.Rewrite{
			Prompt: fmt.Sprintf("Ask the %s agent: %s", name, question),
			Answer: fmt.Sprintf("The %s agent answered:\n\n%s\n", name, answer),
			Keep:   true,
		}
	}
}

// readOnly is the Env of an asked agent's turn: the files and the user of
// the agent that asks, but nothing changes. An approval to edit, delete,
// move or run is refused before anyone is asked; any other question (a
// fetch) goes to the asking agent's user through its one permission
// flow, and a hook's allow never skips it — the asking agent's user
// decides (seed: mm-decision-models). Its read-before-write tracker is its
// own: what it read is not read by the caller.
type readOnly struct {
	tools.Env
	name   string
	reads  *tools.ReadTracker
	prefix string
}

func (r *readOnly) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	if !req.Caps.ReadOnly() {
		return tools.Decision{Reason: "the " + r.name + " agent is read-only: it changes no file and runs no command"}, nil
	}
	// Under ask_<name>, the caller's call gives its own id; under
	// /ask-<name>, this one is unique in the editor's session.
	req.CallID, req.Hook = r.prefix+req.CallID, ""
	req.Title = r.name + ": " + req.Title
	return r.Env.Approve(ctx, req)
}

func (r *readOnly) WriteFile(context.Context, string, []byte, fs.FileMode) error {
	return fmt.Errorf("the %s agent is read-only", r.name)
}

func (r *readOnly) Reads() *tools.ReadTracker { return r.reads }

// askHelp is the REPL's help lines for the /ask-<name> commands.
func (a *app) askHelp() []string {
	var lines []string
	for _, g := range a.agents {
		lines = append(lines, fmt.Sprintf("  /ask-%s QUESTION — ask the %s agent (%s)", g.name, g.name, g.about))
	}
	return lines
}
