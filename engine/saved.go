package engine

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/permit"
)

// saved is what a session keeps beside its history so that it can be
// stored and shown again: the transcript the user saw, the title,
// the chosen mode and thought level, the failures. Guarded by Session.mu.
type saved struct {
	title   string
	created time.Time
	mode    string
	replay  []store.Entry
	open    map[string]int // tool call id → index in replay
	errors  []store.Failure
	// reasoned is set once the model streamed reasoning: the thought
	// level picker is worth showing.
	reasoned bool
	// stamp orders this session's saves: Writer names this session
	// object, Base the snapshot it was restored from, Seq the last
	// snapshot taken.
	stamp store.Stamp
	// turnAt is 1 + the index of the running turn's first entry, 0
	// between turns: the entries before it are final (Record.Final).
	turnAt int
	// stored is set once the session is in the store: restored from
	// it, or saved; saved only once this session object saved it.
	stored, saved bool
}

// choices are what the user changed for the next requests: the model,
// the thought level, and notes for the model about those changes.
// Guarded by Session.mu.
type choices struct {
	model   string   // "" uses Options.ModelName / the server's
	thought string   // "" uses Options.ReasoningEffort
	notes   []string // prepended to the next user message
}

// ID is the session's id in the store ("" when not stored).
func (s *Session) ID() string { return s.opts.ID }

// Restore puts a stored session back: its history, transcript, title,
// mode, thought level, chosen model and tool call numbering (so the ids
// of new calls never collide with those the editor already shows).
func (s *Session) Restore(r *store.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append(s.history[:0:0], r.History...)
	s.cs.restart(s.history)
	s.callSeq = max(s.callSeq, r.CallSeq)
	s.sv.title, s.sv.created, s.sv.mode = r.Title, r.Created, r.Mode
	s.sv.replay = store.CloneEntries(r.Replay)
	s.sv.errors = append([]store.Failure(nil), r.Errors...)
	s.sv.open = nil
	s.sv.reasoned = r.Reasoned
	s.sv.stamp.Base, s.sv.stamp.Seq = r.Seq, r.Seq
	s.histGen = r.HistGen
	s.sv.stored = true
	s.st.thought = r.Thought
	if r.Model != "" && r.Model != s.opts.ModelName {
		s.st.model = r.Model
	}
	if s.opts.Env != nil && slices.ContainsFunc(s.history, func(m llm.Message) bool { return m.Role == llm.RoleUser }) {
		cwd := s.opts.Env.Cwd()
		if n := rootsNote(cwd, r.Dirs, otherRoots(cwd, s.opts.Env.Roots())); n != "" {
			s.st.notes = append(s.st.notes, n)
		}
	}
}

// Replay returns what the user saw, in order, for session/load.
func (s *Session) Replay() []store.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return store.CloneEntries(s.sv.replay)
}

// Reasoned reports whether the model has streamed reasoning in this
// session.
func (s *Session) Reasoned() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sv.reasoned
}

// SetModel switches the model of the next requests; "" goes back to the
// configured one.
func (s *Session) SetModel(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.model = name
}

// Model is the model the next request names ("" when the server's
// default will be filled in by the Model implementation).
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.modelLocked()
}

func (s *Session) modelLocked() string {
	if s.st.model != "" {
		return s.st.model
	}
	if s.opts.ModelName != "" {
		return s.opts.ModelName
	}
	if s.opts.Served != nil {
		_, m := s.opts.Served()
		return m
	}
	return ""
}

// The thought levels of a model whose chat template has a thinking
// switch (enable_thinking) rather than an effort: off and on.
const (
	ThinkingOff = "none"
	ThinkingOn  = "on"
)

// SetThinking sets the thought level of the next requests: "none"
// and "on" turn thinking off and on (chat_template_kwargs.enable_thinking,
// which the client sends only to servers that read it), another level is
// sent as reasoning_effort, "" goes back to the configured effort.
func (s *Session) SetThinking(level string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.thought = level
}

// Thinking is the chosen thought level, or the configured effort.
func (s *Session) Thinking() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.thought != "" {
		return s.st.thought
	}
	return s.opts.ReasoningEffort
}

// reasoning is what the next request sends for the thought level.
func (s *Session) reasoning() (effort string, kwargs map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.st.thought {
	case "":
		return s.opts.ReasoningEffort, s.opts.ChatTemplateKwargs
	case ThinkingOff, ThinkingOn:
		kw := map[string]any{"enable_thinking": s.st.thought == ThinkingOn}
		for k, v := range s.opts.ChatTemplateKwargs {
			if k != "enable_thinking" {
				kw[k] = v
			}
		}
		return "", kw
	}
	return s.st.thought, s.opts.ChatTemplateKwargs
}

// SetMode records the permission mode (the policy enforces it; the
// session only stores it).
func (s *Session) SetMode(mode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sv.mode = mode
}

// SwitchMode is the one way a front end changes the permission mode (the
// editor's picker, the REPL's /mode): the policy enforces it, the session
// records it, and the model is told when plan mode begins or ends, at the
// head of its next user message. It reports whether anything changed.
func (s *Session) SwitchMode(p *permit.Policy, m permit.Mode) bool {
	old := p.Mode()
	if old == m {
		return false
	}
	p.SetMode(m)
	s.SetMode(string(m))
	switch {
	case m == permit.ModePlan:
		s.Tell(permit.PlanNote)
	case old == permit.ModePlan:
		s.Tell(permit.PlanEndNote)
	}
	return true
}

// AdoptMode puts a session's recorded mode (restored from the store) into
// p, or records p's mode when the session has none yet, and tells the
// model when it starts in plan mode. Every front end opens a session
// through it, so a resumed session keeps the mode the user chose for it.
func (s *Session) AdoptMode(p *permit.Policy) {
	if m, ok := permit.ParseMode(s.Mode()); ok {
		p.SetMode(m)
	}
	s.SetMode(string(p.Mode()))
	if p.Mode() == permit.ModePlan {
		s.Tell(permit.PlanNote)
	}
}

// Mode is the recorded permission mode.
func (s *Session) Mode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sv.mode
}

// Tell queues a note for the model, put at the head of the next user
// message: appended to the conversation, it never disturbs the cached
// prefix (a mode change tells the model this way).
func (s *Session) Tell(note string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st.notes = append(s.st.notes, note)
}

// takeNotes returns and clears the queued notes.
func (s *Session) takeNotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.st.notes
	s.st.notes = nil
	return n
}

// transcribe records an event the user saw, for replay.
func (s *Session) transcribe(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sv := &s.sv
	switch e := e.(type) {
	case Text:
		if n := len(sv.replay); n > 0 && sv.replay[n-1].Kind == store.EntryAgent && sv.replay[n-1].Message == e.Message {
			sv.replay[n-1].Text += e.Text
		} else if e.Text != "" {
			sv.replay = append(sv.replay, store.Entry{Kind: store.EntryAgent, Text: e.Text, Message: e.Message})
		}
	case Thought:
		sv.reasoned = sv.reasoned || e.Text != ""
	case Compaction:
		if e.Status == CompactionInProgress {
			break
		}
		text := e.Summary
		if e.Status == CompactionFailed {
			text = e.Err
		}
		sv.replay = append(sv.replay, store.Entry{Kind: store.EntryCompaction, Text: text, Compaction: &store.Compaction{
			ID: e.ID, Status: string(e.Status), Before: e.Before, After: e.After, Turns: e.Turns}})
	case Steered:
		sv.replay = append(sv.replay, store.Entry{Kind: store.EntryUser, Text: e.Text, Message: e.Message, Steered: true})
	case Struggle:
		lvl := "warning"
		if e.Level == Severe {
			lvl = "severe"
		}
		sv.replay = append(sv.replay, store.Entry{Kind: store.EntryNote, Level: lvl, Text: e.Text})
	case ToolStarted:
		if sv.open == nil {
			sv.open = map[string]int{}
		}
		sv.open[e.ID] = len(sv.replay)
		tl := &store.Tool{ID: e.ID, Title: e.Title, Name: e.Name, Kind: e.Kind, Status: string(ToolPending), Input: e.Input, Locations: e.Locations}
		sv.replay = append(sv.replay, store.Entry{Kind: store.EntryTool, Tool: tl.Bound()})
	case ToolUpdated:
		if i, ok := sv.open[e.ID]; ok && e.Status != "" {
			tl := *sv.replay[i].Tool
			tl.Status = string(e.Status)
			sv.replay[i].Tool = &tl
		}
	case ToolFinished:
		if i, ok := sv.open[e.ID]; ok {
			// A new Tool (a snapshot taken earlier keeps its own), kept
			// within the bounds of one entry: the diff cut down to the
			// change, so a session's size follows its edits, not the
			// size of the files edited.
			tl := *sv.replay[i].Tool
			tl.Status, tl.Diffs, tl.Output = string(e.Status), e.Result.Diffs, e.Preview
			if len(e.Result.Locations) > 0 {
				tl.Locations = e.Result.Locations
			}
			sv.replay[i].Tool = tl.Bound()
			delete(sv.open, e.ID)
		}
	}
}

// TitleFrom gives the session its title from its first prompt, as typed
// (the prompt's first line: cheap, and the same every time), unless it
// has one; it reports the title and whether it is new. A front end calls
// it before the turn so the editor can show the title at once; the turn
// calls it again, finding the title set.
func (s *Session) TitleFrom(prompt string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sv.title != "" {
		return s.sv.title, false
	}
	s.sv.title = store.Title(prompt)
	return s.sv.title, true
}

// Title is the session's title ("" before its first prompt).
func (s *Session) Title() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sv.title
}

// Retitle renames the session (the user's /title); it is kept as long as
// the session.
func (s *Session) Retitle(title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sv.title = title
}

// begin records the user's prompt as it was typed.
func (s *Session) begin(prompt string) {
	s.TitleFrom(prompt)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sv.created.IsZero() {
		s.sv.created = time.Now().UTC()
	}
	s.sv.turnAt = len(s.sv.replay) + 1
	s.sv.replay = append(s.sv.replay, store.Entry{Kind: store.EntryUser, Text: prompt, Message: newMessageID()})
}

// ended marks the running turn's entries final.
func (s *Session) ended() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sv.turnAt = 0
}

// finish records a failed turn with the model that produced it.
func (s *Session) finish(end TurnEnd) {
	if end.Reason != Failed {
		return
	}
	provider, _ := s.served()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sv.errors = append(s.sv.errors, store.Failure{Time: time.Now().UTC(), Provider: provider, Model: s.modelLocked(), Text: end.Err})
}

func (s *Session) served() (provider, model string) {
	if s.opts.Served == nil {
		return "", ""
	}
	return s.opts.Served()
}

// Record is the session as it would be stored now: a deep copy that
// nothing in the session changes afterwards, numbered after every earlier
// one (a save of an older snapshot never replaces a newer one), every
// output whole.
func (s *Session) Record() *store.Record {
	return s.record(false)
}

// record is Record; lazy leaves the outputs kept on disk as their stubs,
// for Store.Save to read back those it writes (Record.Spilled): a save
// writes only what changed since the last one, and reading every old
// output back at each turn would cost what keeping them on disk saves.
func (s *Session) record(lazy bool) *store.Record {
	provider, servedModel := s.served()
	s.mu.Lock()
	defer s.mu.Unlock()
	model := s.st.model
	if model == "" {
		model = servedModel
	}
	if model == "" {
		model = s.opts.ModelName
	}
	turns := 0
	for _, e := range s.sv.replay {
		if e.Kind == store.EntryUser && !e.Steered {
			turns++
		}
	}
	cwd, dirs := "", []string(nil)
	if s.opts.Env != nil {
		cwd = s.opts.Env.Cwd()
		dirs = otherRoots(cwd, s.opts.Env.Roots())
	}
	r := &store.Record{
		ID: s.opts.ID, Title: s.sv.title, Cwd: cwd, Dirs: dirs, Provider: provider, Model: model,
		Mode: s.sv.mode, Thought: s.st.thought, Reasoned: s.sv.reasoned, Created: s.sv.created, Updated: time.Now().UTC(),
		Turns: turns, CallSeq: s.callSeq,
		History: cloneHistory(s.history),
		Replay:  store.CloneEntries(s.sv.replay),
		Errors:  append([]store.Failure(nil), s.sv.errors...),
		Writer:  s.writerLocked(), Base: s.sv.stamp.Base, Seq: s.nextSeqLocked(),
		Final: len(s.sv.replay), HistGen: s.histGen,
	}
	if s.sv.turnAt > 0 {
		r.Final = s.sv.turnAt - 1
	}
	if lazy {
		r.Spilled = s.spilledLocked()
	} else {
		r.History = s.wholeLocked(r.History, 0)
	}
	return r
}

// otherRoots are the roots of a session beside its cwd, in order.
func otherRoots(cwd string, roots []string) []string {
	var out []string
	for _, r := range roots {
		if filepath.Clean(r) != filepath.Clean(cwd) {
			out = append(out, r)
		}
	}
	return out
}

// rootsNote tells the model that a restored session's other roots are
// not those its first message named (an editor loads or resumes a
// session with the list it wants now): "" when they are the same.
func rootsNote(cwd string, was, now []string) string {
	var added, gone []string
	for _, d := range now {
		if !slices.Contains(was, d) {
			added = append(added, d)
		}
	}
	for _, d := range was {
		if !slices.Contains(now, d) {
			gone = append(gone, d)
		}
	}
	if len(added)+len(gone) == 0 {
		return ""
	}
	note := "[mm: the session was opened again with other roots."
	if len(added) > 0 {
		note += " Also in the workspace now: " + strings.Join(added, ", ") + " (reach its files by absolute path; relative paths stay relative to " + cwd + ")."
	}
	if len(gone) > 0 {
		note += " No longer in the workspace: " + strings.Join(gone, ", ") + " — its files cannot be read or written."
	}
	return note + "]"
}

func (s *Session) writerLocked() string {
	if s.sv.stamp.Writer == "" {
		s.sv.stamp.Writer = store.NewID()
	}
	return s.sv.stamp.Writer
}

func (s *Session) nextSeqLocked() int64 {
	s.sv.stamp.Seq++
	return s.sv.stamp.Seq
}

// stampNow is the writer's stamp for Store.Acquire.
func (s *Session) stampNow() store.Stamp {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writerLocked()
	return s.sv.stamp
}

// cloneHistory copies messages with their tool calls.
func cloneHistory(h []llm.Message) []llm.Message {
	out := make([]llm.Message, len(h))
	for i, m := range h {
		m.ToolCalls = slices.Clone(m.ToolCalls)
		out[i] = m
	}
	return out
}

// lease holds the session's file in the store for the length of a turn.
// refused is the line to show when another mm runs a turn of it, or
// wrote it since it was loaded here; a store that cannot be locked at
// all (an unwritable state directory) does not stop the turn — its save
// will say so.
func (s *Session) lease() (release func(), refused string) {
	if s.opts.Store == nil || s.opts.ID == "" {
		return func() {}, ""
	}
	cwd := ""
	if s.opts.Env != nil {
		cwd = s.opts.Env.Cwd()
	}
	release, err := s.opts.Store.Acquire(cwd, s.opts.ID, s.stampNow())
	switch {
	case errors.Is(err, store.ErrInUse):
		return nil, "session " + s.opts.ID + " is in use by another mm (a turn is running there) — wait for it to end, or start a new session"
	case errors.Is(err, store.ErrChanged):
		return nil, "session " + s.opts.ID + " was continued by another mm since it was opened here — open it again to see and continue that conversation"
	case err != nil:
		s.opts.Logger.Warn("session not locked", "session", s.opts.ID, "err", err)
		return func() {}, ""
	}
	return release, ""
}

// Save writes the session to the store, when it has one. Turns save on
// their own; front ends call it when a session opens (so that a client
// may load it even before its first prompt) and after changing the mode
// or the model.
func (s *Session) Save() error {
	if s.opts.Store == nil || s.opts.ID == "" {
		return nil
	}
	if err := s.opts.Store.Save(s.record(true)); err != nil {
		return err
	}
	s.mu.Lock()
	s.sv.stored, s.sv.saved = true, true
	s.mu.Unlock()
	return nil
}

// Saved reports whether this session object has saved the session: what
// line mode offers to resume is what it wrote itself.
func (s *Session) Saved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sv.saved
}

// Stored reports whether the session is in the store (restored from it,
// or saved at least once): only then is it worth offering to resume.
func (s *Session) Stored() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sv.stored
}
