package agents

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"sync/atomic"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/ask"
)

// Agent is one entry of the config's agents list: another agent file
// the chat model (ask_<name>) and the user (/ask-<name>) can put one
// question to. It answers in a session of its own, built from its file —
// provider, server, model, sampling, system prompt, skills, hooks — with
// no history but the question, and read-only tools.
type Agent struct {
	name, about string
	// session builds the agent's own session in cwd, its tools running in
	// env (the read-only view of the caller's): its own connection to its
	// server, profile and skills, sharing only the workspace's language
	// servers with the agent that asks.
	session func(cwd string, env tools.Env) *engine.Session
	// asks numbers the questions, so that the permission questions of
	// different asks never share a tool call id in the editor.
	asks atomic.Int64
}

// New is the agent called name, described by about (the config's
// description, else its model), whose sessions session builds. The
// session's tools must already be read-only (no bash, no edit tools); the
// Env it gets refuses any change besides.
func New(name, about string, session func(cwd string, env tools.Env) *engine.Session) *Agent {
	return &Agent{name: name, about: about, session: session}
}

// Name is the agent's name in the config (ask_<name>, /ask-<name>).
func (g *Agent) Name() string { return g.name }

// About says what the agent is, for the tool's description and menus.
func (g *Agent) About() string { return g.about }

// Set is the config's agents, in the config's order.
type Set []*Agent

// Tools are the ask_<name> tools of the agents.
func (s Set) Tools() []tools.Tool {
	var ts []tools.Tool
	for _, g := range s {
		ts = append(ts, ask.New(ask.Options{Name: g.name, About: g.about, Ask: g.tool}))
	}
	return ts
}

// tool is ask_<name>'s Run: the answer as the tool result, a failure as
// one repair line.
func (g *Agent) tool(ctx context.Context, env tools.Env, question string) (tools.Result, error) {
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
func (g *Agent) ask(ctx context.Context, env tools.Env, question string) (answer, failed string, err error) {
	ro := &readOnly{Env: env, name: g.name, reads: tools.NewReadTracker(), prefix: fmt.Sprintf("ask-%s-%d-", g.name, g.asks.Add(1))}
	s := g.session(env.Cwd(), ro)
	// Where the editor shows subagents, the turn is a child session of
	// its own, which the user may also stop alone.
	cctx, child, shown := engine.Delegate(ctx, env, engine.Delegation{Agent: g.name, About: g.about, Task: question})
	var text strings.Builder
	end := s.Run(cctx, question, func(e engine.Event) {
		switch e := e.(type) {
		case engine.Text:
			text.WriteString(e.Text)
		case engine.ToolStarted:
			text.Reset() // what it said before a call is not its answer
			env.Progress(g.name + ": " + e.Title)
		}
		if shown {
			child.Emit(e)
		}
	})
	stopped := cctx.Err() != nil // before End, which ends cctx
	if shown {
		child.End(end)
	}
	if ctx.Err() != nil {
		return "", "", ctx.Err()
	}
	if stopped {
		return "", "the user stopped it before it answered", nil
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

// Rewriter answers "/ask-<name> question" with the other agent's
// answer, which the user sees. The exchange is kept in the conversation
// (engine.Rewrite.Keep): the user asked inside this conversation, so the
// chat model must see the question and the answer next turn ("use what
// the historian said") — the asked agent itself remembers nothing.
func (s Set) Rewriter(env tools.Env, next func(context.Context, string) engine.Rewrite) func(context.Context, string) engine.Rewrite {
	if len(s) == 0 {
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
		var g *Agent
		var names []string
		for _, c := range s {
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
// decides. Its read-before-write tracker is its
// own: what it read is not read by the caller.
type readOnly struct {
	tools.Env
	name   string
	reads  *tools.ReadTracker
	prefix string
}

func (r *readOnly) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	if !permit.ReadOnly(req.Caps) {
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

// Help is the REPL's help lines for the /ask-<name> commands.
func (s Set) Help() []string {
	var lines []string
	for _, g := range s {
		lines = append(lines, fmt.Sprintf("  /ask-%s QUESTION — ask the %s agent (%s)", g.name, g.name, g.about))
	}
	return lines
}
