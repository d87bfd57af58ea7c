package acp

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"
)

// Command is a slash command of the editor's / menu. It arrives as prompt
// text ("/name input") and goes to the engine like any prompt.
type Command struct {
	Name, Description string
	// Hint is shown for the input after the name; "" takes none.
	Hint string
}

// builtinCommands are always offered. compact is handled by the engine
// (see docs/long-sessions.md); skills lists the skills.
var builtinCommands = []Command{
	{Name: "compact", Description: "Summarise the older part of the conversation to free context"},
	{Name: "skills", Description: "List the skills mm can use in this workspace"},
	{Name: "title", Description: "Rename this session", Hint: "new title"},
}

// Commands is the / menu: the built-in commands, then extra (one
// /ask-<name> per asked agent, one command per skill). It is the one place
// the list is made, for the first announcement and for every later change.
func Commands(extra ...Command) []sdk.AvailableCommand {
	out := make([]sdk.AvailableCommand, 0, len(builtinCommands)+len(extra))
	seen := map[string]bool{}
	for _, c := range append(append([]Command(nil), builtinCommands...), extra...) {
		if c.Name == "" || seen[c.Name] {
			continue
		}
		seen[c.Name] = true
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.Hint}}
		}
		out = append(out, ac)
	}
	return out
}

// announce sends the session's / menu. It runs after the answer to
// session/new, load or resume was written (see Serve), because a client
// ignores updates for a session it does not know yet.
func (a *Agent) announce(id sdk.SessionId) {
	s := a.session(id)
	if s == nil {
		return
	}
	var extra []Command
	if s.b.Commands != nil {
		extra = s.b.Commands(s.cwd)
	}
	s.update(context.Background(), sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{
		SessionUpdate: "available_commands_update", AvailableCommands: Commands(extra...),
	}})
}

// answered is called by the transport once the answer opening a session
// was written; the / menu goes out on its own goroutine, joined by
// closeAll, since the writer is busy with the answer, and then the server
// is asked for its models (models.go).
func (a *Agent) answered(sessionID string) {
	// Once the connection is gone, there is nobody to tell.
	a.spawn("announce", func() {
		a.announce(sdk.SessionId(sessionID))
		if s := a.session(sdk.SessionId(sessionID)); s != nil {
			a.fetchModels(a.stop, s)
		}
	})
}

// Announce sends the / menu of every open session of the workspace cwd
// again (skills changed).
func (a *Agent) Announce(cwd string) {
	a.mu.Lock()
	var ids []sdk.SessionId
	for id, s := range a.sessions {
		if s.cwd == cwd {
			ids = append(ids, id)
		}
	}
	a.mu.Unlock()
	for _, id := range ids {
		a.announce(id)
	}
}
