package acp

import (
	"context"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/store"
)

// Subagent sessions (unstable ACP), for a client that advertised
// clientCapabilities.subagents: the work a session delegates — a
// question to one of the config's asked agents, a guard agent's check of
// a tool's output — is a child session. The child is announced on its
// parent with subagent_update (title, description, the cancel
// capability, state running) before any of its traffic; what it is asked
// is a session_message from the parent on the child; its answer, thoughts
// and tool calls stream on the child's own session id; its end is a
// subagent_update with state idle and the stop reason. Each agent has one
// child per session, reused at each delegation. session/cancel with the
// child's id stops that delegation alone: the parent's turn goes on,
// told the agent did not answer. A client without the capability sees
// the work as before, as progress lines and notes in the turn.
//
// A child is not saved on its own: what the parent's turn got from it is
// in the parent's history, and its replay shows it as a client without
// subagents saw it — an asked agent's answer as the output of its
// ask_<name> call, a guard's finding as the turn's note. Its id is the
// parent's, a dash and the agent's name (the same child id when the
// parent is opened again), so that session/load, resume or fork of a
// child id answers which session to load instead.

// subagent is one child session.
type subagent struct {
	id     sdk.SessionId
	parent *session

	mu   sync.Mutex
	stop context.CancelFunc // the running delegation's; nil while idle
}

// Subagent implements engine.Subagents for a client that shows them.
func (e *editorEnv) Subagent(ctx context.Context, d engine.Delegation) (context.Context, engine.Child, bool) {
	s := e.s
	if !s.agent.sessionCaps().subagents {
		return ctx, nil, false
	}
	c, fresh := s.subagent(d.Agent)
	cctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.stop = cancel
	c.mu.Unlock()
	u := map[string]any{"sessionUpdate": "subagent_update", "sessionId": c.id, "state": map[string]any{"state": "running"}}
	if fresh {
		u["title"], u["description"] = d.Agent, d.About
		u["capabilities"] = map[string]any{"cancel": map[string]any{}}
	}
	s.raw(u)
	s.agent.rawOn(c.id, map[string]any{"sessionUpdate": "session_message", "messageId": "msg_" + strings.TrimPrefix(store.NewID(), "sess_"),
		"senderSessionId": s.id, "recipientSessionId": c.id, "content": []any{map[string]any{"type": "text", "text": d.Task}}})
	return cctx, c, true
}

// subagent is the session's child for the agent named, made (and
// registered for session/cancel) the first time; fresh says so.
func (s *session) subagent(name string) (c *subagent, fresh bool) {
	s.mu.Lock()
	c = s.children[name]
	if c == nil {
		c = &subagent{id: s.childID(name), parent: s}
		if s.children == nil {
			s.children = map[string]*subagent{}
		}
		s.children[name] = c
		fresh = true
	}
	s.mu.Unlock()
	if fresh {
		a := s.agent
		a.mu.Lock()
		if a.children == nil {
			a.children = map[sdk.SessionId]*subagent{}
		}
		a.children[c.id] = c
		a.mu.Unlock()
	}
	return c, fresh
}

// childID is the id of the session's child for the agent named: the
// parent's id, a dash and the name, each run of what a stored id may not
// hold (all but letters, digits, '-' and '_') a dash, numbered when two
// names read the same. Called with s.mu.
func (s *session) childID(agent string) sdk.SessionId {
	var slug []byte
	for i := 0; i < len(agent) && len(slug) < 48; i++ {
		switch c := agent[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
			slug = append(slug, c)
		case len(slug) > 0 && slug[len(slug)-1] != '-':
			slug = append(slug, '-')
		}
	}
	base := s.id + sdk.SessionId("-"+strings.Trim(string(slug), "-"))
	id := base
	for n := 2; s.hasChild(id); n++ {
		id = base + sdk.SessionId("-"+strconv.Itoa(n))
	}
	return id
}

// hasChild reports whether id is one of the session's children. Called
// with s.mu.
func (s *session) hasChild(id sdk.SessionId) bool {
	for _, c := range s.children {
		if c.id == id {
			return true
		}
	}
	return false
}

// notSaved is the answer to session/load, resume or fork of a child
// session's id — one of this mm's, or one whose parent is saved in the
// workspace cwd — naming the session to load instead; nil for any other
// id.
func (a *Agent) notSaved(id sdk.SessionId, cwd string) error {
	parent, _, isChild := strings.Cut(string(id), "-")
	if c := a.child(id); c != nil {
		parent = string(c.parent.id)
	} else if !isChild || !strings.HasPrefix(parent, "sess_") || a.session(sdk.SessionId(parent)) == nil && !a.saved(parent, cwd) {
		return nil
	}
	return invalid("session " + string(id) + " is an agent's child session of session " + parent +
		": a child session is not saved on its own — load " + parent + ", whose replay shows what the agent answered")
}

// saved reports whether session id is in the store, in workspace cwd.
func (a *Agent) saved(id, cwd string) bool {
	if a.opts.Store == nil {
		return false
	}
	_, err := a.opts.Store.LoadIn(cwd, id)
	return err == nil
}

// Emit shows one event of the child's work on its own session.
func (c *subagent) Emit(e engine.Event) {
	a, ctx := c.parent.agent, context.Background()
	switch e := e.(type) {
	case engine.Struggle:
		a.updateOn(ctx, c.id, sdk.UpdateAgentMessageText(StruggleNote(e)))
		return
	case engine.ToolStarted:
		if u, ok := render(e); ok {
			a.namedOn(ctx, c.id, u, e.Name)
		}
		return
	}
	if u, ok := render(e); ok {
		a.updateOn(ctx, c.id, u)
	}
}

// End reports on the parent that the child's work ended, and how.
func (c *subagent) End(end engine.TurnEnd) {
	c.mu.Lock()
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	c.mu.Unlock()
	state := map[string]any{"state": "idle", "stopReason": string(end.Reason)}
	if end.Reason == engine.Failed {
		state["stopReason"] = "error"
		state["error"] = map[string]any{"code": -32603, "message": end.Err}
	}
	if end.Prompt+end.Completion > 0 {
		state["usage"] = turnUsage(end)
	}
	c.parent.raw(map[string]any{"sessionUpdate": "subagent_update", "sessionId": c.id, "state": state})
}

// cancel stops the child's running delegation, if any (session/cancel
// with its id); it reports whether one ran.
func (c *subagent) cancel() bool {
	c.mu.Lock()
	stop := c.stop
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	return stop != nil
}

// child is the child session with this id; nil for any other.
func (a *Agent) child(id sdk.SessionId) *subagent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.children[id]
}

// forgetChildren drops a released session's children.
func (s *session) forgetChildren() {
	s.mu.Lock()
	cs := s.children
	s.children = nil
	s.mu.Unlock()
	a := s.agent
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range cs {
		delete(a.children, c.id)
	}
}
