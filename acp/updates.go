package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/store"
)

// ACP (2026-11) added session updates the SDK (v0.13.5) has no types
// for: compaction_update and compaction_summary_chunk, sent only to a
// client that advertised clientCapabilities.session.compaction, and
// notice, only with session.notices. The SDK drops the capabilities it
// does not know, so the stdin reader reads them (sessionCaps), and the
// updates are written here, in one place, as JSON-RPC lines through the
// writer the SDK writes with.

// sessionCaps are the client's session capabilities the SDK cannot see:
// compaction and notices updates, boolean config options.
type sessionCaps struct {
	compaction, notices, booleans bool
	subagents                     bool // clientCapabilities.subagents (unstable)
}

// readSessionCaps reads clientCapabilities.session of an initialize
// request; ok is false for any other message.
func readSessionCaps(msg []byte) (sessionCaps, bool) {
	if !bytes.Contains(msg, []byte(`"`+sdk.AgentMethodInitialize+`"`)) {
		return sessionCaps{}, false
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Caps struct {
				Session struct {
					Compaction    json.RawMessage `json:"compaction"`
					Notices       json.RawMessage `json:"notices"`
					ConfigOptions struct {
						Boolean json.RawMessage `json:"boolean"`
					} `json:"configOptions"`
				} `json:"session"`
				Subagents json.RawMessage `json:"subagents"`
			} `json:"clientCapabilities"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != sdk.AgentMethodInitialize {
		return sessionCaps{}, false
	}
	on := func(raw json.RawMessage) bool { // {} advertises; omitted or null does not
		return len(raw) > 0 && raw[0] == '{'
	}
	s := m.Params.Caps.Session
	return sessionCaps{compaction: on(s.Compaction), notices: on(s.Notices), booleans: on(s.ConfigOptions.Boolean),
		subagents: on(m.Params.Caps.Subagents)}, true
}

func (a *Agent) sessionCaps() sessionCaps {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.caps
}

// send writes one JSON-RPC message mm makes itself — an update, a
// request or an answer the SDK has no types for — through the writer the
// SDK writes with, as one whole line. This is the one place such lines
// are written.
func (a *Agent) send(msg map[string]any) error {
	a.mu.Lock()
	out := a.out
	a.mu.Unlock()
	if out == nil {
		return errors.New("no editor is connected")
	}
	msg["jsonrpc"] = "2.0"
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode a message: %w", err)
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write a message: %w", err)
	}
	return nil
}

// raw sends a session/update the SDK cannot express. The caller's
// goroutine writes it as it writes the SDK's updates, so it keeps its
// place among them.
func (s *session) raw(update map[string]any) { s.agent.rawOn(s.id, update) }

// rawOn is raw for the session id, a child session's included.
func (a *Agent) rawOn(id sdk.SessionId, update map[string]any) {
	err := a.send(map[string]any{"method": sdk.ClientMethodSessionUpdate,
		"params": map[string]any{"sessionId": id, "update": update}})
	if err != nil {
		a.log.Debug("session update not delivered", "session", id, "err", err)
	}
}

// named sends a tool_call with the tool's name (ToolCall.name, stable in
// the 2026-11 schema), which the SDK's ToolCall has no field for: the
// SDK's own encoding of the update, with the name added.
func (s *session) named(ctx context.Context, u sdk.SessionUpdate, name string) {
	s.agent.namedOn(ctx, s.id, u, name)
}

// namedOn is named for the session id, a child session's included.
func (a *Agent) namedOn(ctx context.Context, id sdk.SessionId, u sdk.SessionUpdate, name string) {
	if name == "" || u.ToolCall == nil {
		a.updateOn(ctx, id, u)
		return
	}
	b, err := json.Marshal(u)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		a.log.Debug("tool call sent without its name", "err", err)
		a.updateOn(ctx, id, u)
		return
	}
	m["name"] = name
	a.rawOn(id, m)
}

// compaction shows a compaction as it goes to a client that advertised
// session.compaction: compaction_update in_progress, then the summary as
// compaction_summary_chunk and compaction_update completed (the tokens
// before and after in _meta), or failed with the reason, or cancelled.
// Other clients see the notes and progress lines that come with it.
func (s *session) compaction(c engine.Compaction) {
	if !s.agent.sessionCaps().compaction {
		return
	}
	if c.Status == engine.CompactionCompleted && c.Summary != "" {
		s.raw(map[string]any{"sessionUpdate": "compaction_summary_chunk", "compactionId": c.ID,
			"content": map[string]any{"type": "text", "text": c.Summary}})
	}
	u := map[string]any{"sessionUpdate": "compaction_update", "compactionId": c.ID, "status": string(c.Status)}
	switch c.Status {
	case engine.CompactionCompleted:
		u["_meta"] = map[string]any{"mm": map[string]any{"tokensBefore": c.Before, "tokensAfter": c.After, "turnsSummarised": c.Turns}}
	case engine.CompactionFailed:
		u["error"] = c.Err
	}
	s.raw(u)
}

// replayCompaction shows a stored compaction in its place on
// session/load.
func (s *session) replayCompaction(e store.Entry) {
	if e.Compaction == nil {
		return
	}
	c := engine.Compaction{ID: e.Compaction.ID, Status: engine.CompactionStatus(e.Compaction.Status),
		Before: e.Compaction.Before, After: e.Compaction.After, Turns: e.Compaction.Turns}
	if c.Status == engine.CompactionFailed {
		c.Err = e.Text
	} else {
		c.Summary = e.Text
	}
	s.compaction(c)
}

// kindTrust marks the note that the workspace's config is not trusted.
const kindTrust = "trust"

// noticeTitles are the short titles of notices, by struggle kind; a kind
// not listed is titled by its own name.
var noticeTitles = map[string]string{
	"loop": "The model repeats itself", "stuck": "The model is stuck in a loop", "failing": "Tool calls keep failing",
	"runaway": "Runaway tool call", "broken_call": "Malformed tool call", "unknown_tool": "Call to an unknown tool",
	"text_tool_call": "Tool call written as text", "tool_budget": "Many tool calls this turn", "stalled": "The model server stalled",
	"max_turns": "Step limit reached", "server_error": "Model server error", "empty_answer": "The model answered nothing",
	"context_full": "Context window nearly full", "context": "Context window", "cache": "Prompt cache not reused",
	"diagnostics": "Language server", "skill": "Skill", "store": "Session not saved", "tool": "Tool", "mcp": "MCP server",
	engine.KindHook: "Hook", engine.KindGuard: "Flagged by a guard", kindTrust: "Workspace config not trusted",
}

// struggle shows one of mm's notes: a notice (severity and a short
// title) to a client that advertised session.notices, else today's
// italic paragraph in the answer. The severity is error for a turn
// stopped, info for what mm did on its own and that worked, else
// warning. Notices are live, not history: the
// model never depends on one, and session/load does not replay them.
func (s *session) struggle(ctx context.Context, e engine.Struggle) {
	if !s.agent.sessionCaps().notices {
		s.update(ctx, sdk.UpdateAgentMessageText(StruggleNote(e)))
		return
	}
	sev := "warning"
	switch e.Level {
	case engine.Severe:
		sev = "error"
	case engine.Info:
		sev = "info"
	}
	title := noticeTitles[e.Kind]
	if title == "" {
		title = "mm: " + e.Kind
	}
	s.raw(map[string]any{"sessionUpdate": "notice", "severity": sev, "title": title, "description": e.Text})
}
