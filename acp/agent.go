package acp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/sourcegraph/conc/panics"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// Builder makes sessions from one reading of mm's config. A session
// keeps the builder it was made with for its whole life, so a config
// changed on disk changes the sessions opened after, never a running one.
type Builder struct {
	// Workspace returns the base environment (disk) and the permission
	// policy of a new session whose working directory is cwd and whose
	// other roots are dirs (additionalDirectories, absolute).
	Workspace func(cwd string, dirs []string) (tools.Env, *permit.Policy, error)
	// Engine builds the engine session of an ACP session (new, or about to
	// be restored from the store) with this id; its tools run in env (the
	// editor-aware environment built by this package), extra are the
	// tools of its MCP servers.
	Engine func(id, cwd string, env tools.Env, extra []tools.Tool) (*engine.Session, error)
	// MCP connects the MCP servers of a session (the client's, from
	// session/new, load or resume, and mm's own config's), bounded in
	// time. It returns their tools (given to Engine as extra), the lines
	// to show the user (a server that failed), and close, called when the
	// session closes or mm exits. Nil: the client's servers are refused
	// with a note.
	MCP func(ctx context.Context, cwd string, servers []sdk.McpServer) (ts []tools.Tool, notes []string, close func())
	// Untrusted says that the workspace's own config is not trusted and
	// what of it was ignored, shown at the first prompt of each session
	// (a notice of its own: it is about trust, not about a server); ""
	// when there is nothing to say.
	Untrusted string
	// Models lists the served models for the model picker; nil or an
	// error shows no picker.
	Models func(ctx context.Context) ([]string, error)
	// ThoughtLevels are the levels of the thought level picker, shown once
	// the model reasons or when an effort is configured; nil shows none.
	ThoughtLevels func(ctx context.Context) []string
	// Commands returns the slash commands of a workspace beyond the
	// built-in ones (one per skill); nil adds none.
	Commands func(cwd string) []Command
}

// Options configure the Agent.
type Options struct {
	Name, Version string
	// Builder returns what the next session is built with. It is called
	// at each session/new, load and resume, so mm can read its config
	// again when it changed: a config fixed in the editor works without
	// restarting the agent. Its error (the config is wrong) is one line,
	// the answer to the request; sessions already open go on. Nil: no
	// session can be built.
	Builder func() (*Builder, error)
	// Store holds the saved sessions (session/list, load, resume); nil
	// keeps none and those methods are not advertised.
	Store *store.Store
	// Providers lets the editor choose the model server (providers/*,
	// unstable); nil leaves those methods unadvertised.
	Providers *Providers
	// Setup is offered when no model server can be used (setup.go); nil
	// offers no auth method and never answers auth_required.
	Setup *Setup
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Agent implements the ACP agent side.
type Agent struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	conn     *sdk.AgentSideConnection
	client   sdk.ClientCapabilities
	caps     sessionCaps // what the SDK cannot read of the client's (updates.go)
	out      io.Writer   // the writer the SDK writes with, for updates it has no types for
	sessions map[sdk.SessionId]*session
	children map[sdk.SessionId]*subagent // the sessions' subagent sessions (subagents.go)
	closing  bool                        // closeAll began: no new announcement goroutine

	own ownRequests // requests mm writes itself (elicit.go)

	models modelList // the model picker's list (models.go)

	// stop ends what runs in the background for the connection (the
	// model list asked after an answer) at EOF or closeAll.
	stop    context.Context
	stopNow context.CancelFunc

	wg sync.WaitGroup // running turns

	// arrivals numbers the prompts in the order the reader read them
	// (arrival.go).
	arrivals atomic.Uint64

	// freeing: a return of freed memory to the system is under way
	// (giveBack).
	freeing atomic.Bool

	// eof is closed once stdin ended: no answer from the client can
	// arrive any more, so calls that would wait for one give up.
	eof     chan struct{}
	eofOnce sync.Once
}

func (a *Agent) inputEnded() {
	a.eofOnce.Do(func() { close(a.eof) })
	a.stopNow()
}

// New returns an Agent; serve it with Serve.
func New(opts Options) *Agent {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Name == "" {
		opts.Name = "mm"
	}
	a := &Agent{opts: opts, log: log, sessions: map[sdk.SessionId]*session{}, eof: make(chan struct{})}
	a.stop, a.stopNow = context.WithCancel(context.Background())
	return a
}

var _ sdk.Agent = (*Agent)(nil)

func (a *Agent) setConn(c *sdk.AgentSideConnection) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.conn = c
}

func (a *Agent) connection() *sdk.AgentSideConnection {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conn
}

// Initialize negotiates the protocol version and announces what mm can do.
func (a *Agent) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	a.mu.Lock()
	a.client = p.ClientCapabilities
	a.mu.Unlock()
	v := sdk.ProtocolVersion(sdk.ProtocolVersionNumber)
	if p.ProtocolVersion < v {
		v = p.ProtocolVersion
	}
	caps := sdk.AgentCapabilities{
		PromptCapabilities: promptCapabilities,
		McpCapabilities:    sdk.McpCapabilities{Http: a.opts.Builder != nil},
		SessionCapabilities: sdk.SessionCapabilities{
			Close: &sdk.SessionCloseCapabilities{},
		},
	}
	if a.opts.Store != nil {
		caps.LoadSession = true
		caps.SessionCapabilities.List = &sdk.SessionListCapabilities{}
		caps.SessionCapabilities.Resume = &sdk.SessionResumeCapabilities{}
		caps.SessionCapabilities.Fork = &sdk.SessionForkCapabilities{}
		caps.SessionCapabilities.Delete = &sdk.SessionDeleteCapabilities{}
	}
	if a.opts.Builder != nil {
		caps.SessionCapabilities.AdditionalDirectories = &sdk.SessionAdditionalDirectoriesCapabilities{}
	}
	if a.opts.Providers != nil {
		caps.Providers = &sdk.ProvidersCapabilities{}
	}
	return sdk.InitializeResponse{
		ProtocolVersion:   v,
		AgentInfo:         &sdk.Implementation{Name: a.opts.Name, Title: sdk.Ptr("mm"), Version: a.opts.Version},
		AgentCapabilities: caps,
		AuthMethods:       a.authMethods(p.ClientCapabilities),
		Meta:              steeringMeta(),
	}, nil
}

// Logout is not served: mm has no login to end (it does not advertise
// agentCapabilities.auth.logout), so it answers as an unknown method.
func (a *Agent) Logout(context.Context, sdk.LogoutRequest) (sdk.LogoutResponse, error) {
	return sdk.LogoutResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodLogout)
}

// NewSession starts a conversation in the client's working directory. It
// answers with the modes and config options; the / menu follows the
// answer.
func (a *Agent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	b, err := a.builder()
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	if err := a.ready(ctx); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	id := sdk.SessionId(store.NewID())
	s, err := a.open(ctx, b, id, p.Cwd, p.AdditionalDirectories, nil, p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	s.fresh.Store(true) // written at its first turn or when released, not now
	a.log.Info("session started", "session", id, "cwd", p.Cwd)
	return sdk.NewSessionResponse{SessionId: id, Modes: modeState(s.policy.Mode()), ConfigOptions: s.configOptions(ctx)}, nil
}

// Prompt runs one turn and answers with its stop reason. A failed turn
// (server error, guard) answers a JSON-RPC error carrying one actionable
// line, after the struggle note was streamed.
func (a *Agent) Prompt(ctx context.Context, p sdk.PromptRequest) (resp sdk.PromptResponse, err error) {
	s := a.session(p.SessionId)
	if s == nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "unknown session " + string(p.SessionId)})
	}
	arrival := arrivalOf(p.Meta)
	in := s.inbox(arrival)
	defer s.forget(arrival, in)
	if err := checkBlocks(p.Prompt); err != nil {
		return sdk.PromptResponse{}, err
	}
	defer a.giveBack()
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("prompt panicked", "panic", r, "stack", string(debug.Stack()))
			resp, err = sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": fmt.Sprintf("internal error: %v", r)})
		}
	}()
	ctx, done, st := s.begin(ctx, arrival)
	defer done()
	switch st {
	case beginClosed:
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "session " + string(p.SessionId) + " is closed"})
	case beginCancelled:
		// Cancelled before it began (a session/cancel read after it), or
		// replaced by a prompt read after it: it never runs.
		a.log.Info("prompt cancelled before it began", "session", p.SessionId)
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	text := promptText(p.Prompt, s.env.Roots())
	if title, ok := titleCommand(text); ok {
		if title == "" {
			return sdk.PromptResponse{}, invalid("/title needs the new title: /title Fix the parser")
		}
		s.retitle(context.WithoutCancel(ctx), title)
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	end := s.run(ctx, text, in)
	usage := turnUsage(end)
	switch end.Reason {
	case engine.Cancelled:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled, Usage: usage}, nil
	case engine.Failed:
		// The message is the one actionable line itself: clients show it.
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: end.Err}
	case engine.MaxTokens:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTokens, Usage: usage}, nil
	case engine.MaxTurns:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests, Usage: usage}, nil
	case engine.Refusal:
		return sdk.PromptResponse{StopReason: sdk.StopReasonRefusal, Usage: usage}, nil
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn, Usage: usage}, nil
}

// turnUsage is the turn's token counts, nil when the server sent
// none.
func turnUsage(end engine.TurnEnd) *sdk.Usage {
	if end.Prompt+end.Completion == 0 {
		return nil
	}
	u := &sdk.Usage{InputTokens: end.Prompt, OutputTokens: end.Completion, TotalTokens: end.Prompt + end.Completion}
	if end.Cached > 0 {
		u.CachedReadTokens = sdk.Ptr(end.Cached)
	}
	return u
}

// Cancel stops the session's current turn: its context is cancelled,
// which stops the model stream, the running tool and pending permission
// prompts, and the prompt answers "cancelled". Serve's reader handles
// every session/cancel itself, in input order (arrival.go); this is for a
// connection that reaches the SDK some other way.
func (a *Agent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	s := a.session(p.SessionId)
	running := s != nil && s.cancel()
	if c := a.child(p.SessionId); c != nil {
		running = c.cancel()
	}
	a.log.Info("cancel", "session", p.SessionId, "running", running)
	return nil
}

// closeWait bounds how long session/close waits for a cancelled turn to
// return; a tool that ignores its context must not hang the editor.
const closeWait = 10 * time.Second

// CloseSession cancels the session's running turn as session/cancel would,
// waits for it to return (so no model request follows the answer), then
// forgets the session (ACP session/close).
func (a *Agent) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	a.mu.Lock()
	s := a.sessions[p.SessionId]
	delete(a.sessions, p.SessionId)
	a.mu.Unlock()
	if s == nil {
		return sdk.CloseSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "unknown session " + string(p.SessionId)})
	}
	if !s.close(closeWait) {
		a.log.Warn("session closed while its turn still runs", "session", p.SessionId, "waited", closeWait)
	}
	s.release()
	a.log.Info("session closed", "session", p.SessionId)
	return sdk.CloseSessionResponse{}, nil
}

// builder is what the next session is built with, or the answer to a
// request that needs one when mm's config is wrong: the one line is the
// message itself, which is what editors show.
func (a *Agent) builder() (*Builder, error) {
	if a.opts.Builder == nil {
		return nil, sdk.NewInternalError(map[string]any{"error": "mm was built without a session factory"})
	}
	b, err := a.opts.Builder()
	if err != nil {
		line := err.Error()
		return nil, &sdk.RequestError{Code: -32603, Message: line, Data: map[string]any{"error": line}}
	}
	return b, nil
}

func (a *Agent) session(id sdk.SessionId) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// cancelTurns cancels every prompt read so far, running or not begun, in
// every session (EOF on stdin).
func (a *Agent) cancelTurns() {
	a.mu.Lock()
	ss := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		ss = append(ss, s)
	}
	a.mu.Unlock()
	read := a.arrivals.Load()
	for _, s := range ss {
		s.cancelUpTo(read)
	}
}

// giveBack returns the memory the turn used and freed to the system,
// beside the turn's answer, while the user reads it. Go keeps freed heap
// for reuse and gives it back slowly: a session whose turns read big
// files grew by megabytes that its live heap (≈ 2 MB) never needed. One
// forced collection at a turn's end costs about a millisecond; turns
// ending together share one.
func (a *Agent) giveBack() {
	if !a.freeing.CompareAndSwap(false, true) {
		return
	}
	if !a.spawn("giving memory back", func() {
		defer a.freeing.Store(false)
		debug.FreeOSMemory()
	}) {
		a.freeing.Store(false)
	}
}

// spawn runs f on a goroutine of its own that closeAll waits for, a
// panic logged as what's; it reports false — f not run — once closeAll
// began.
func (a *Agent) spawn(what string, f func()) bool {
	if !a.hold() {
		return false
	}
	go func() {
		defer a.wg.Done()
		if r := panics.Try(f); r != nil {
			a.log.Error(what+" panicked", "panic", r.Value, "stack", string(r.Stack))
		}
	}()
	return true
}

// hold counts one more goroutine closeAll must wait for, and reports
// false — counting nothing — once closeAll began: the Add happens under
// mu, so it never races closeAll's Wait.
func (a *Agent) hold() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.wg.Add(1)
	return true
}

// closeAll waits for the running turns (their contexts were cancelled
// with the connection, so their tools' processes are being killed) and
// forgets every session.
func (a *Agent) closeAll() {
	a.mu.Lock()
	a.closing = true
	a.mu.Unlock()
	a.stopNow()
	a.wg.Wait()
	a.mu.Lock()
	ss := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		ss = append(ss, s)
	}
	clear(a.sessions)
	a.mu.Unlock()
	for _, s := range ss {
		s.release()
	}
}
