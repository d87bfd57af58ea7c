package engine

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mm-agent/mm/engine/detect"
	"github.com/mm-agent/mm/engine/hooks"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/tools"
)

// Model streams one chat completion. *llm.Client implements it.
type Model interface {
	Stream(ctx context.Context, req llm.Request, on func(llm.Delta) error) (llm.Response, error)
}

// Options configure a Session. Zero values are documented per field.
type Options struct {
	// Model is the chat model client (required).
	Model Model
	// ModelName is sent as the request's model.
	ModelName string
	// Tools are offered to the model; nil offers none.
	Tools *tools.Registry
	// Env is where tools run (required when Tools is not empty).
	Env tools.Env
	// SystemPrompt replaces the built-in one when not empty.
	SystemPrompt string
	// ProjectContext (AGENTS.md, CLAUDE.md) goes at the head of the first
	// user message, truncated to 4,000 characters.
	ProjectContext string
	Sampling       llm.Sampling
	// ReasoningEffort is sent as reasoning_effort when not empty.
	ReasoningEffort string
	// ChatTemplateKwargs are sent to llama.cpp and DMR only (the client
	// decides).
	ChatTemplateKwargs map[string]any
	// SendReasoning keeps reasoning in history for profiles that need it
	// sent back with tool-call turns (gpt-oss).
	SendReasoning bool
	// KeepReasoning, when set, decides SendReasoning at each answer: the
	// profile is known only once the server named its model.
	KeepReasoning func() bool
	// MaxTurns bounds model calls per turn; 0 means 10.
	MaxTurns int
	// PreviewLines of each tool output are shown to the user before the
	// model sees them; 0 means 8.
	PreviewLines int
	// ContextWindow returns the window size in tokens, 0 when unknown. It
	// is called after each model call, so it may probe lazily and cache.
	ContextWindow func(ctx context.Context) int
	// Explain turns a model-server error into one actionable line; nil
	// means llm.Explain.
	Explain func(error) string
	// AdaptiveTemperature (off by default until measured): after a
	// loop warning, the next model call samples at 0.4 to shake the model
	// out of its rut, then the configured temperature comes back.
	AdaptiveTemperature bool
	// ToolBudget is the soft budget of tool calls per turn: 0 means
	// 24, negative turns it off.
	ToolBudget int
	// Rewrite, when set, rewrites each prompt before it enters history
	// (skills' $name and /name, skill routing) or answers it without a
	// model call. It runs on the turn's context and must bound its own
	// waits: the turn waits for it.
	Rewrite func(ctx context.Context, prompt string) Rewrite
	// ToolRouter, when set, is asked once per turn, after the
	// preGeneration hooks and the rewriter, which tools the turn can do
	// without. The turn waits for it: it must bound its own waits
	// and hide nothing on any failure.
	ToolRouter func(ctx context.Context, prompt string) ToolRoute
	// Hooks are the team's external commands; nil runs none.
	Hooks *hooks.Runner
	// Context configures masking, compaction and output bounds.
	Context ContextOptions
	// WindowUnknown, when set, reports that the server was reached and
	// did not say its window: the session then says so once, with the
	// fix, instead of a log line the user never reads.
	WindowUnknown func() bool
	// LearnWindow, when set, is told the window an overflow error revealed,
	// so that the server's connector (and other sessions) learn it too.
	LearnWindow func(int)
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Late, when set, gives the checks of edits (the language servers'
	// diagnostics) that ended after the edit's result was given: what
	// ended is put before the next tool result, and a turn does not end
	// while a check runs that finds new errors.
	Late LateChecks

	// Store keeps the session after every turn; nil keeps it in
	// memory only. ID names it there.
	Store *store.Store
	ID    string
	// Served names the provider and model serving the session once known
	// (for the stored record and its errors); nil means unknown.
	Served func() (provider, model string)
}

func (o *Options) budget() detect.ToolBudget {
	switch {
	case o.ToolBudget < 0:
		return detect.ToolBudget{}
	case o.ToolBudget == 0:
		return detect.ToolBudget{Threshold: detect.DefaultToolBudget}
	}
	return detect.ToolBudget{Threshold: o.ToolBudget}
}

// LateChecks are the checks of a session's edits still going on after
// the edit's result was given (lspbridge.Late).
type LateChecks interface {
	// Take returns, once, what ended since the last call; "" if nothing.
	Take(ctx context.Context) string
	// Checkpoint waits, at most bound, for the checks still running and
	// returns the new errors they found; "" if none.
	Checkpoint(ctx context.Context, bound time.Duration) string
	// Pending reports whether a check runs or has an answer not taken.
	Pending() bool
}

// lateBound bounds the wait for an edit's check at the end of a turn: a
// machine too busy to check an edit in the edit's own wait needs long,
// and a turn ended on an edit that broke the build costs more.
const lateBound = time.Minute

// Session is one conversation: its history and counters. Run may be called
// again for the next prompt; turns of one session never overlap.
type Session struct {
	opts Options

	turn sync.Mutex // held for the whole of a turn

	mu      sync.Mutex // guards the fields below
	history []llm.Message
	histGen int64 // changes whenever history is rewritten, not appended to
	callSeq int
	loops   *detect.LoopDetector           // reset at the start of each turn
	report  detect.Report                  // the running turn's struggle reporter
	total   TurnEnd                        // session totals (Prompt, Completion, Cached)
	sv      saved                          // what is stored beside the history (saved.go)
	st      choices                        // model, thought level, notes (saved.go)
	cs      ctxState                       // context budgeting (window.go)
	spill   *spillFile                     // masked outputs on disk (spill.go)
	hidden  map[string]bool                // tools hidden for the running turn (toolroute.go)
	fixed   map[detect.TextCallFormat]bool // server fixes named (textcall.go)

	emitMu sync.Mutex
}

// NewSession returns an empty session.
func NewSession(opts Options) *Session {
	if opts.MaxTurns <= 0 {
		opts.MaxTurns = 10
	}
	if opts.PreviewLines <= 0 {
		opts.PreviewLines = 8
	}
	if opts.Explain == nil {
		opts.Explain = llm.Explain
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.SystemPrompt == "" {
		opts.SystemPrompt = systemPrompt
	}
	return &Session{opts: opts}
}

// History returns a copy of the conversation so far (no system message),
// every output whole.
func (s *Session) History() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wholeLocked(append([]llm.Message(nil), s.history...), 0)
}

// SetHistory replaces the conversation (a loaded session). Turn
// boundaries are found again from the user's prompts; nothing is masked
// until the next step.
func (s *Session) SetHistory(h []llm.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append([]llm.Message(nil), h...)
	s.histGen++
	s.cs.restart(s.history)
}

// Totals returns the session's token counts so far.
func (s *Session) Totals() (prompt, completion, cached int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total.Prompt, s.total.Completion, s.total.Cached
}

// loop returns the session's loop detector.
func (s *Session) loop() *detect.LoopDetector {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loops == nil {
		s.loops = detect.NewLoopDetector(detect.LoopOptions{Report: func(st detect.Struggle) {
			s.mu.Lock()
			r := s.report
			s.mu.Unlock()
			if r != nil {
				r(st)
			}
		}})
	}
	return s.loops
}

// reportTo routes the loop detector's struggles to the running turn.
func (s *Session) reportTo(r detect.Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.report = r
}

func (s *Session) addTotals(u llm.Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total.Prompt += u.PromptTokens
	s.total.Completion += u.CompletionTokens
	s.total.Cached += u.CachedTokens
}

func (s *Session) append(m llm.Message) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = append(s.history, m)
	return len(s.history) - 1
}

func (s *Session) nextCallID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.callSeq++
	return "call_" + strconv.Itoa(s.callSeq)
}

// firstUserMessage reports whether the history holds no user message yet.
func (s *Session) firstUserMessage() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.history {
		if m.Role == llm.RoleUser {
			return false
		}
	}
	return true
}

// userMessage wraps the prompt: queued notes (a mode change) first; the
// first message of a session also carries the workspace and the project
// context, so the system prompt stays byte-identical across sessions.
func (s *Session) userMessage(prompt string) string {
	var b strings.Builder
	for _, n := range s.takeNotes() {
		b.WriteString(n + "\n\n")
	}
	if s.firstUserMessage() {
		b.WriteString(s.header())
	}
	b.WriteString(prompt)
	return b.String()
}

// header is what the first user message starts with: the workspace and
// the project context (AGENTS.md, truncated to 4,000 characters), then a
// blank line; "" when there is neither. A compaction keeps it at the head.
func (s *Session) header() string {
	var b strings.Builder
	if s.opts.Env != nil {
		b.WriteString("Workspace: " + s.opts.Env.Cwd() + "\n")
		// More roots (additionalDirectories): the model reaches them by
		// absolute path; relative paths stay relative to the first.
		if more := otherRoots(s.opts.Env.Cwd(), s.opts.Env.Roots()); len(more) > 0 {
			b.WriteString("Also in the workspace: " + strings.Join(more, ", ") + "\n")
		}
	}
	if pc := strings.TrimSpace(s.opts.ProjectContext); pc != "" {
		const max = 4000
		if len(pc) > max {
			pc = pc[:max] + "\n[project context truncated]"
		}
		b.WriteString("Project context:\n" + pc + "\n")
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteString("\n")
	return b.String()
}

// keepReasoning reports whether reasoning goes back with the answer.
func (s *Session) keepReasoning() bool {
	if s.opts.KeepReasoning != nil {
		return s.opts.KeepReasoning()
	}
	return s.opts.SendReasoning
}
