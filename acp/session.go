package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// session is one ACP session: its engine session, the environment its
// tools run in, and the cancel of its current turn.
//
// The session owns that cancel rather than relying on the SDK's
// per-session one: the SDK forgets its cancel when any prompt of the
// session returns, so after a second prompt replaced the first, the first
// one's return would make the second uncancellable.
type session struct {
	id     sdk.SessionId
	agent  *Agent
	b      *Builder // what the session was built with (its config)
	cwd    string
	dirs   []string // its other roots (additionalDirectories), cleaned
	engine *engine.Session
	env    *editorEnv
	policy *permit.Policy

	thoughtShown bool // the thought level picker was offered (turn goroutine)

	// notes are shown at the start of the first prompt (the workspace
	// config is not trusted, an MCP server failed to start); closeMCP
	// ends the session's MCP servers.
	notes    []engine.Struggle
	closeMCP func()
	released sync.Once

	// fresh: opened by session/new and not written yet. Nothing in it is
	// worth a write while the editor waits for the answer; it is written
	// when released (session/close, end of the connection) unless a turn
	// or a change of mode, model or title wrote it first.
	fresh atomic.Bool

	terminals map[string]string // tool call id → its terminal (under mu)

	// The steering inboxes of the prompts read and not yet returned, by
	// arrival, and the newest one's, which steering goes to (under mu;
	// steering.go).
	inboxes map[uint64]*engine.Inbox
	latest  *engine.Inbox

	children map[string]*subagent // by agent name (under mu; subagents.go)

	mu      sync.Mutex
	current *turnCtl // the latest prompt's turn; nil when idle
	// cancelled: every prompt read at or before this arrival was
	// cancelled by a session/cancel read after it (arrival.go).
	cancelled uint64
	closed    bool           // session/close was called: no new turn starts
	turns     sync.WaitGroup // prompts in progress, waiting ones included
}

// turnCtl is one prompt's cancel; its pointer identifies the prompt, its
// arrival (0: unknown) its place in the input.
type turnCtl struct {
	cancel  context.CancelFunc
	arrival uint64
}

// How begin went.
const (
	beginRunning   = iota // the prompt is the current one
	beginClosed           // the session was closed
	beginCancelled        // cancelled, or replaced by a later prompt, before it began
)

// begin registers a new prompt as the current one and cancels the one it
// replaces (a new prompt while one runs cancels the old). A prompt the
// client cancelled, or replaced by a prompt sent after it, before its
// handler got here does not begin. end must be called when the prompt
// returns.
func (s *session) begin(ctx context.Context, arrival uint64) (context.Context, func(), int) {
	ctx, cancel := context.WithCancel(ctx)
	t := &turnCtl{cancel: cancel, arrival: arrival}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		cancel()
		return ctx, func() {}, beginClosed
	case arrival != 0 && (arrival <= s.cancelled || s.current != nil && s.current.arrival > arrival):
		s.mu.Unlock()
		cancel()
		return ctx, func() {}, beginCancelled
	}
	prev := s.current
	s.current = t
	s.turns.Add(1)
	s.mu.Unlock()
	if prev != nil {
		prev.cancel()
	}
	end := func() {
		s.mu.Lock()
		if s.current == t {
			s.current = nil
		}
		s.mu.Unlock()
		cancel()
		s.turns.Done()
	}
	return ctx, end, beginRunning
}

// cancelUpTo is a session/cancel as the reader reads it: the prompts read
// up to arrival are cancelled — the current one now, one whose handler
// has not begun when it begins. It reports whether a turn was running.
func (s *session) cancelUpTo(arrival uint64) bool {
	s.mu.Lock()
	if arrival > s.cancelled {
		s.cancelled = arrival
	}
	t := s.current
	s.mu.Unlock()
	if t != nil && t.arrival <= arrival {
		t.cancel()
		return true
	}
	return false
}

// cancel stops the current turn, if any (session/cancel's handler). It
// reports whether there was one. A turn whose prompt was read after every
// cancel read so far is not the one a cancel meant: the reader's mark
// (cancelUpTo) says which prompts the cancels were for.
func (s *session) cancel() bool {
	s.mu.Lock()
	t := s.current
	if t != nil && t.arrival != 0 && t.arrival > s.cancelled {
		t = nil
	}
	s.mu.Unlock()
	if t != nil {
		t.cancel()
	}
	return t != nil
}

// close cancels the running turn, refuses new ones, and waits up to wait
// for the prompts in progress to return, so that no model request is made
// for the session once close has answered.
func (s *session) close(wait time.Duration) bool {
	s.mu.Lock()
	s.closed = true
	t := s.current
	s.mu.Unlock()
	if t != nil {
		t.cancel()
	}
	done := make(chan struct{})
	go func() { s.turns.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(wait):
		return false
	}
}

// release ends what the session holds outside mm (its MCP servers),
// once.
func (s *session) release() {
	s.released.Do(func() {
		s.agent.models.forget(s)
		s.forgetChildren()
		if s.fresh.Load() && s.engine != nil {
			s.save()
		}
		if s.closeMCP != nil {
			s.closeMCP()
		}
	})
}

// run plays one turn, rendering every event as a session update. Updates
// are sent on a context detached from the turn's, so the final ones still
// reach the client after a cancel.
func (s *session) run(ctx context.Context, prompt string, in *engine.Inbox) engine.TurnEnd {
	if !s.agent.hold() {
		return engine.TurnEnd{Reason: engine.Cancelled} // the connection is closing
	}
	defer s.agent.wg.Done()
	send := context.WithoutCancel(ctx)
	s.mu.Lock()
	notes := s.notes
	s.notes = nil
	s.mu.Unlock()
	for _, n := range notes {
		s.struggle(send, n)
	}
	if title, isNew := s.engine.TitleFrom(prompt); isNew {
		s.info(send, title, time.Time{})
	}
	defer func() { s.info(send, "", time.Now()) }()
	end := s.engine.RunSteered(ctx, prompt, in, func(e engine.Event) {
		switch e := e.(type) {
		case engine.Compaction:
			s.compaction(e)
			return
		case engine.Struggle:
			s.struggle(send, e)
			return
		}
		u, ok := render(e)
		if !ok {
			return
		}
		switch e := e.(type) {
		case engine.ToolFinished:
			if id := s.terminalOf(e.ID); id != "" {
				u.ToolCallUpdate.Content = append([]sdk.ToolCallContent{sdk.ToolTerminalRef(id)}, u.ToolCallUpdate.Content...)
			}
		case engine.ToolStarted:
			s.named(send, u, e.Name)
			return
		}
		s.update(send, u)
	})
	s.fresh.Store(false) // the turn wrote the session
	// The thought level picker appears once the model has reasoned.
	if !s.thoughtShown && len(s.thoughtLevels(send)) > 0 {
		s.thoughtShown = true
		s.update(send, sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{SessionUpdate: "config_option_update", ConfigOptions: s.configOptions(send)}})
	}
	return end
}

func (s *session) update(ctx context.Context, u sdk.SessionUpdate) { s.agent.updateOn(ctx, s.id, u) }

// updateOn sends u on the session id, a child session's included.
func (a *Agent) updateOn(ctx context.Context, id sdk.SessionId, u sdk.SessionUpdate) {
	conn := a.connection()
	if conn == nil {
		return
	}
	if err := conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
		a.log.Debug("session update not delivered", "session", id, "err", err)
	}
}

// render maps an engine event to a session update. Front ends switch on
// event types, never on tool names.
func render(e engine.Event) (sdk.SessionUpdate, bool) {
	switch e := e.(type) {
	case engine.Text:
		u := sdk.UpdateAgentMessageText(e.Text)
		u.AgentMessageChunk.MessageId = messageID(e.Message)
		return u, true
	case engine.Thought:
		u := sdk.UpdateAgentThoughtText(e.Text)
		u.AgentThoughtChunk.MessageId = messageID(e.Message)
		return u, true
	case engine.Progress:
		return sdk.UpdateAgentThoughtText(e.Text + "\n"), true
	case engine.Struggle:
		return sdk.UpdateAgentMessageText(StruggleNote(e)), true
	case engine.ToolStarted:
		return sdk.StartToolCall(sdk.ToolCallId(e.ID), permit.Shown(e.Title),
			sdk.WithStartKind(toolKind(e.Kind)),
			sdk.WithStartStatus(sdk.ToolCallStatusPending),
			sdk.WithStartLocations(locations(e.Locations)),
			sdk.WithStartRawInput(rawJSON(e.Input)),
		), true
	case engine.ToolUpdated:
		var opts []sdk.ToolCallUpdateOpt
		if e.Status != "" {
			opts = append(opts, sdk.WithUpdateStatus(sdk.ToolCallStatus(e.Status)))
		}
		if e.Progress != "" {
			opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Progress))}))
		}
		return sdk.UpdateToolCall(sdk.ToolCallId(e.ID), opts...), true
	case engine.ToolFinished:
		opts := []sdk.ToolCallUpdateOpt{
			sdk.WithUpdateStatus(sdk.ToolCallStatus(e.Status)),
			sdk.WithUpdateContent(content(e.Result.Diffs, e.Preview)),
		}
		if len(e.Result.Locations) > 0 {
			opts = append(opts, sdk.WithUpdateLocations(locations(e.Result.Locations)))
		}
		return sdk.UpdateToolCall(sdk.ToolCallId(e.ID), opts...), true
	case engine.Plan:
		entries := make([]sdk.PlanEntry, len(e.Entries))
		for i, p := range e.Entries {
			prio := sdk.PlanEntryPriority(p.Priority)
			if prio == "" {
				prio = sdk.PlanEntryPriorityMedium // required by ACP; the plan tool has no priorities
			}
			entries[i] = sdk.PlanEntry{Content: p.Content, Status: sdk.PlanEntryStatus(p.Status), Priority: prio}
		}
		return sdk.UpdatePlan(entries...), true
	case engine.Usage:
		if e.Size <= 0 {
			return sdk.SessionUpdate{}, false
		}
		return sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{SessionUpdate: "usage_update", Used: e.Used, Size: e.Size}}, true
	case engine.ContextStep:
		// What is in context changed (masked, compacted, shrunk): the
		// editor's meter shows the new size at once.
		if e.Size <= 0 {
			return sdk.SessionUpdate{}, false
		}
		return sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{SessionUpdate: "usage_update", Used: e.After, Size: e.Size}}, true
	}
	return sdk.SessionUpdate{}, false
}

// messageID is the chunk's messageId: nil when the engine gave none (a
// session saved before ids).
func messageID(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

// StruggleNote is the short italic paragraph signed mm shown inside the
// agent message.
func StruggleNote(e engine.Struggle) string {
	if e.Level == engine.Severe {
		return note("severe", e.Text)
	}
	return note("warning", e.Text)
}

func note(level, text string) string {
	mark := "⚠"
	if level == "severe" {
		mark = "✖"
	}
	return "\n\n_mm: " + mark + " " + strings.ReplaceAll(text, "_", "\\_") + "_\n\n"
}

// content is what a finished call shows: its diffs, then the first lines
// of its output.
func content(diffs []tools.Diff, preview string) []sdk.ToolCallContent {
	var c []sdk.ToolCallContent
	for _, d := range diffs {
		if d.Old != nil {
			c = append(c, sdk.ToolDiffContent(d.Path, d.New, *d.Old))
		} else {
			c = append(c, sdk.ToolDiffContent(d.Path, d.New))
		}
	}
	if strings.TrimSpace(preview) != "" {
		c = append(c, sdk.ToolContent(sdk.TextBlock(preview)))
	}
	return c
}

func locations(ls []tools.Location) []sdk.ToolCallLocation {
	out := make([]sdk.ToolCallLocation, 0, len(ls))
	for _, l := range ls {
		loc := sdk.ToolCallLocation{Path: l.Path}
		if l.Line > 0 {
			loc.Line = sdk.Ptr(l.Line)
		}
		out = append(out, loc)
	}
	return out
}

func toolKind(k tools.Kind) sdk.ToolKind {
	switch k {
	case tools.KindRead, tools.KindEdit, tools.KindDelete, tools.KindMove, tools.KindSearch,
		tools.KindExecute, tools.KindThink, tools.KindFetch:
		return sdk.ToolKind(k)
	}
	return sdk.ToolKindOther
}

func rawJSON(b json.RawMessage) any {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	return v
}

// promptCapabilities are the content blocks mm takes in a prompt besides
// text and resource links: embedded resources, no image, no audio. The
// same value is advertised in initialize and enforced by checkBlocks.
var promptCapabilities = sdk.PromptCapabilities{EmbeddedContext: true}

// checkBlocks refuses, as invalid params naming the block type, a prompt
// block mm did not advertise or does not know — dropping it silently would
// answer a question the user did not ask.
func checkBlocks(blocks []sdk.ContentBlock) *sdk.RequestError {
	refuse := func(i int, why string) *sdk.RequestError {
		return invalidParams(fmt.Sprintf("prompt block %d: %s", i, why))
	}
	for i, b := range blocks {
		switch {
		case b.Image != nil && !promptCapabilities.Image:
			return refuse(i, `content block type "image" is not supported (promptCapabilities.image is false)`)
		case b.Audio != nil && !promptCapabilities.Audio:
			return refuse(i, `content block type "audio" is not supported (promptCapabilities.audio is false)`)
		case b.Resource != nil && !promptCapabilities.EmbeddedContext:
			return refuse(i, `content block type "resource" is not supported (promptCapabilities.embeddedContext is false)`)
		case b.Text != nil && b.Text.Type == "":
			return refuse(i, `content block has no "type" (mm takes text, resource_link and resource)`)
		case b.Text != nil && b.Text.Type != "text":
			// The SDK reads an unknown type as a text block; its type says
			// what it really was.
			return refuse(i, fmt.Sprintf("unknown content block type %q (mm takes text, resource_link and resource)", b.Text.Type))
		case b.Text == nil && b.Image == nil && b.Audio == nil && b.ResourceLink == nil && b.Resource == nil:
			return refuse(i, "empty content block (mm takes text, resource_link and resource)")
		}
	}
	return nil
}

// promptText flattens the prompt's content blocks (checked by checkBlocks):
// text as is, links and binary resources as "[attached file: /abs/path]"
// for the model to read with its tools, and embedded text resources as
// attached content with their URI. A link to a file outside
// roots says so: the model's tools will not read it, and a bare
// "attached file" line would send it trying.
func promptText(blocks []sdk.ContentBlock, roots []string) string {
	attached := func(uri string) string {
		p := uriPath(uri)
		if filepath.IsAbs(p) && errors.Is(tools.Inside(roots, p), tools.ErrOutside) {
			return "[" + p + " was attached but is outside the workspace: it was not read, and your tools cannot read it — ask the user for what you need from it]"
		}
		return "[attached file: " + p + "]"
	}
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, attached(b.ResourceLink.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("[attached content of %s]\n%s\n[end of %s]", uriPath(r.Uri), r.Text, uriPath(r.Uri)))
		case b.Resource != nil && b.Resource.Resource.BlobResourceContents != nil:
			// Binary contents are not text for the model; its tools can
			// look at the file it names.
			parts = append(parts, attached(b.Resource.Resource.BlobResourceContents.Uri))
		}
	}
	return strings.Join(parts, "\n")
}

func uriPath(u string) string {
	if p, err := url.Parse(u); err == nil && p.Scheme == "file" {
		return p.Path
	}
	return u
}
