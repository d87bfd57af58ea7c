package acp

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// open builds a session in cwd under id, restored from rec when given,
// and registers it.
func (a *Agent) open(ctx context.Context, b *Builder, id sdk.SessionId, cwd string, dirs []string, rec *store.Record, mcp []sdk.McpServer) (*session, error) {
	if !filepath.IsAbs(cwd) {
		return nil, invalid("cwd must be an absolute path, got " + cwd)
	}
	dirs = cleanDirs(dirs)
	base, policy, err := b.Workspace(cwd, dirs)
	if err != nil {
		return nil, invalid(err.Error())
	}
	s := &session{id: id, agent: a, b: b, cwd: cwd, dirs: dirs, policy: policy}
	s.env = &editorEnv{Env: base, files: base, policy: policy, s: s}
	a.mu.Lock()
	fsCaps := a.client.Fs
	s.env.terminal = a.client.Terminal
	a.mu.Unlock()
	if fsCaps.ReadTextFile || fsCaps.WriteTextFile {
		s.env.files = &editorFiles{disk: base, s: s, read: fsCaps.ReadTextFile, write: fsCaps.WriteTextFile}
	}
	if b.Untrusted != "" {
		s.notes = append(s.notes, engine.Struggle{Level: engine.Warning, Kind: kindTrust, Text: b.Untrusted})
	}
	var extra []tools.Tool
	var mcpNotes []string
	switch {
	case b.MCP != nil:
		extra, mcpNotes, s.closeMCP = b.MCP(ctx, cwd, mcp)
	case len(mcp) > 0:
		mcpNotes = []string{"MCP servers are not supported by this build of mm; their tools are not offered"}
	}
	for _, n := range mcpNotes {
		s.notes = append(s.notes, engine.Struggle{Level: engine.Warning, Kind: "mcp", Text: n})
	}
	eng, err := b.Engine(string(id), cwd, s.env, extra)
	if err != nil {
		s.release()
		return nil, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s.engine = eng
	if rec != nil {
		eng.Restore(rec)
	}
	eng.AdoptMode(policy)
	s.thoughtShown = len(s.thoughtLevels(ctx)) > 0 // offered in the answer
	a.mu.Lock()
	a.sessions[id] = s
	a.mu.Unlock()
	return s, nil
}

// stored finds a session to load or resume: the open one, else the store's.
func (a *Agent) stored(id sdk.SessionId, cwd string) (*session, *store.Record, error) {
	if s := a.session(id); s != nil {
		s, err := inWorkspace(s, cwd)
		return s, nil, err
	}
	if err := a.notSaved(id, cwd); err != nil {
		return nil, nil, err
	}
	if a.opts.Store == nil {
		return nil, nil, invalid("unknown session " + string(id) + " — this mm keeps no sessions")
	}
	rec, err := a.opts.Store.LoadIn(cwd, string(id))
	switch {
	case errors.Is(err, store.ErrOtherWorkspace):
		return nil, nil, invalid(err.Error() + " — a session is loaded in its own workspace only")
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrBadID):
		return nil, nil, invalid("unknown session " + string(id) + " — session/list shows the saved ones")
	case err != nil:
		a.log.Warn("cannot load session", "session", id, "err", err)
		return nil, nil, invalid("session " + string(id) + " cannot be read: " + err.Error())
	}
	return nil, rec, nil
}

// inWorkspace returns the open session s when cwd is its workspace: a
// session belongs to the workspace it was started in.
func inWorkspace(s *session, cwd string) (*session, error) {
	if filepath.Clean(s.cwd) != filepath.Clean(cwd) {
		return nil, invalid((&store.WorkspaceError{ID: string(s.id), Cwd: s.cwd}).Error() + " — a session is loaded in its own workspace only")
	}
	return s, nil
}

// cleanDirs are additional directories as mm keeps them: cleaned, in
// the client's order.
func cleanDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Clean(d))
	}
	return out
}

// resume opens a stored session, or returns the open one. The request's
// additional directories are the session's whole list from now on (none
// when it gives none): an open session asked for another list is saved,
// closed — its running turn cancelled — and opened again with it.
func (a *Agent) resume(ctx context.Context, id sdk.SessionId, cwd string, dirs []string, mcp []sdk.McpServer) (*session, error) {
	if s := a.session(id); s != nil {
		s, err := inWorkspace(s, cwd)
		if err != nil || slices.Equal(s.dirs, cleanDirs(dirs)) {
			return s, err
		}
		a.reopen(s)
	}
	b, err := a.builder()
	if err != nil {
		return nil, err
	}
	s, rec, err := a.stored(id, cwd)
	if err != nil || s != nil {
		return s, err
	}
	s, err = a.open(ctx, b, id, cwd, dirs, rec, mcp)
	if err != nil {
		return nil, err
	}
	a.log.Info("session restored", "session", id, "cwd", cwd, "messages", len(rec.History))
	// The model chosen in the thread may be gone from the server since.
	if models := a.fetchModels(ctx, s); len(models) > 0 && rec.Model != "" && !slices.Contains(models, rec.Model) {
		a.log.Info("the session's model is no longer served; using the default", "model", rec.Model)
		s.engine.SetModel("")
	}
	return s, nil
}

// LoadSession is session/load: the whole stored conversation is replayed
// as updates — user messages, answers, mm's notes, tool calls with their
// final status, output and diffs — before the answer.
func (a *Agent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	s, err := a.resume(ctx, p.SessionId, p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	for _, e := range s.engine.Replay() {
		switch {
		case e.Kind == store.EntryCompaction:
			s.replayCompaction(e)
			continue
		case e.Kind == store.EntryNote && a.sessionCaps().notices:
			continue // shown live as a notice: not history
		}
		for _, u := range replay(e) {
			if e.Tool != nil {
				s.named(ctx, u, e.Tool.Name)
				continue
			}
			s.update(ctx, u)
		}
	}
	if t := s.engine.Title(); t != "" {
		s.info(ctx, t, time.Time{})
	}
	return sdk.LoadSessionResponse{Modes: modeState(s.policy.Mode()), ConfigOptions: s.configOptions(ctx)}, nil
}

// ResumeSession is session/resume: the session is restored without
// replaying it (the client kept its view).
func (a *Agent) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	s, err := a.resume(ctx, p.SessionId, p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return sdk.ResumeSessionResponse{}, err
	}
	return sdk.ResumeSessionResponse{Modes: modeState(s.policy.Mode()), ConfigOptions: s.configOptions(ctx)}, nil
}

// ListSessions is session/list: the saved sessions of the workspace cwd
// (of every workspace without one), newest first, a page at a time.
func (a *Agent) ListSessions(_ context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	resp := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	if a.opts.Store == nil {
		return resp, nil
	}
	cwd := ""
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return resp, invalid("cwd must be an absolute path, got " + *p.Cwd)
		}
		cwd = *p.Cwd
	}
	all := a.opts.Store.List(cwd)
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return resp, invalid("bad cursor " + strconv.Quote(*p.Cursor) + ": pass the nextCursor of the previous answer")
		}
		start = n
	}
	end := min(start+listPage, len(all))
	for _, sum := range all[start:end] {
		resp.Sessions = append(resp.Sessions, sdk.SessionInfo{
			SessionId: sdk.SessionId(sum.ID), Cwd: sum.Cwd, AdditionalDirectories: sum.Dirs, Title: sdk.Ptr(sum.Title),
			UpdatedAt: sdk.Ptr(sum.Updated.UTC().Format(time.RFC3339)),
		})
	}
	if end < len(all) {
		resp.NextCursor = sdk.Ptr(strconv.Itoa(end))
	}
	return resp, nil
}

// reopen saves and closes the open session s, so that it can be opened
// again from the store (with other roots).
func (a *Agent) reopen(s *session) {
	a.mu.Lock()
	if a.sessions[s.id] == s {
		delete(a.sessions, s.id)
	}
	a.mu.Unlock()
	if !s.close(closeWait) {
		a.log.Warn("session reopened while its turn still runs", "session", s.id, "waited", closeWait)
	}
	s.save()
	s.release()
	a.log.Info("session reopened with other additional directories", "session", s.id)
}

// UnstableDeleteSession is session/delete (stable in the schema; the SDK
// files it under unstable): the session's running turn is cancelled and
// waited for, as session/close does, the open session is forgotten, and
// its saved files are removed, so a later load fails. An unknown id, or
// a session whose turn runs in another mm, is an error and nothing is
// removed from the store.
func (a *Agent) UnstableDeleteSession(_ context.Context, p sdk.UnstableDeleteSessionRequest) (sdk.UnstableDeleteSessionResponse, error) {
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	delete(a.sessions, p.SessionId)
	a.mu.Unlock()
	if s != nil {
		if !s.close(closeWait) {
			a.log.Warn("session deleted while its turn still runs", "session", p.SessionId, "waited", closeWait)
		}
		s.fresh.Store(false) // nothing to write: it is going away
		s.release()
	}
	if a.opts.Store == nil {
		if s == nil {
			return sdk.UnstableDeleteSessionResponse{}, invalid("unknown session " + string(p.SessionId))
		}
		return sdk.UnstableDeleteSessionResponse{}, nil
	}
	err := a.opts.Store.Delete(string(p.SessionId))
	switch {
	case err == nil, s != nil && errors.Is(err, store.ErrNotFound):
		a.log.Info("session deleted", "session", p.SessionId)
		return sdk.UnstableDeleteSessionResponse{}, nil
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrBadID):
		return sdk.UnstableDeleteSessionResponse{}, invalid("unknown session " + string(p.SessionId) + " — session/list shows the saved ones")
	case errors.Is(err, store.ErrInUse):
		return sdk.UnstableDeleteSessionResponse{}, invalid("session " + string(p.SessionId) + " is in use by another mm (a turn is running there) — delete it once that turn ends")
	}
	a.log.Warn("cannot delete session", "session", p.SessionId, "err", err)
	return sdk.UnstableDeleteSessionResponse{}, sdk.NewInternalError(map[string]any{"error": "session " + string(p.SessionId) + " cannot be deleted: " + err.Error()})
}

// replay turns one stored entry into the updates that showed it.
func replay(e store.Entry) []sdk.SessionUpdate {
	switch e.Kind {
	case store.EntryUser:
		u := sdk.UpdateUserMessageText(e.Text)
		u.UserMessageChunk.MessageId = messageID(e.Message)
		return []sdk.SessionUpdate{u}
	case store.EntryAgent:
		u := sdk.UpdateAgentMessageText(e.Text)
		u.AgentMessageChunk.MessageId = messageID(e.Message)
		return []sdk.SessionUpdate{u}
	case store.EntryNote:
		lvl := "warning"
		if e.Level == "severe" {
			lvl = "severe"
		}
		return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(note(lvl, e.Text))}
	case store.EntryTool:
		if e.Tool == nil {
			return nil
		}
		t := e.Tool
		status := sdk.ToolCallStatus(t.Status)
		if status != sdk.ToolCallStatusCompleted {
			status = sdk.ToolCallStatusFailed // a call cut by a cancel or a crash did not finish
		}
		opts := []sdk.ToolCallStartOpt{
			sdk.WithStartKind(toolKind(t.Kind)),
			sdk.WithStartStatus(status),
			sdk.WithStartLocations(locations(t.Locations)),
			sdk.WithStartContent(content(t.Diffs, t.Output)),
		}
		if len(t.Input) > 0 {
			opts = append(opts, sdk.WithStartRawInput(rawJSON(t.Input)))
		}
		return []sdk.SessionUpdate{sdk.StartToolCall(sdk.ToolCallId(t.ID), permit.Shown(t.Title), opts...)}
	}
	return nil
}
