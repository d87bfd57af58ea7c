package engine

import (
	"context"

	"github.com/mm-agent/mm/tools"
)

// Subagents is offered by the environment of a session whose front end
// shows the work its agent delegates — to the config's asked agents
// (ask_<name>, /ask-<name>) and guard agents — as sessions of their own
// (ACP's subagent sessions): announced, streamed apart from the turn that
// delegated, and stoppable on their own. Without it that work shows as
// before: progress lines and notes in the turn.
type Subagents interface {
	// Subagent opens the child session of the agent named in d (the same
	// child each time the session delegates to that agent) and shows what
	// it is asked. The context returned ends with ctx, and also when the
	// user stops the child alone. ok is false when the front end shows no
	// subagents: go on with ctx, and show nothing.
	Subagent(ctx context.Context, d Delegation) (context.Context, Child, bool)
}

// Delegation is one piece of work given to another agent.
type Delegation struct {
	Agent string // its name in the config
	About string // what it is, for the user
	Task  string // what it is asked, as it reads it
}

// Child is the child session of one delegation.
type Child interface {
	// Emit shows one event of the child's work in its own session.
	Emit(Event)
	// End says the child's work ended, and how.
	End(TurnEnd)
}

// Delegate opens the child session of d where env's front end shows
// subagents (see Subagents); ok is false elsewhere.
func Delegate(ctx context.Context, env tools.Env, d Delegation) (context.Context, Child, bool) {
	if s, ok := env.(Subagents); ok {
		return s.Subagent(ctx, d)
	}
	return ctx, nil, false
}

// Subagent forwards to the front end's subagents (Subagents): the
// embedded Env's methods are all a callEnv shows otherwise.
func (c *callEnv) Subagent(ctx context.Context, d Delegation) (context.Context, Child, bool) {
	return Delegate(ctx, c.Env, d)
}
