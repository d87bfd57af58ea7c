package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/tools"
)

// Options configure the Agent.
type Options struct {
	Name, Version string
	// Workspace returns the base environment (disk) and the permission
	// policy of a new session whose working directory is cwd.
	Workspace func(cwd string) (tools.Env, *tools.Policy, error)
	// Engine builds the engine session of a new ACP session; its tools run
	// in env (the editor-aware environment built by this package).
	Engine func(cwd string, env tools.Env) (*engine.Session, error)
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
	sessions map[sdk.SessionId]*session

	wg sync.WaitGroup // running turns
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
	return &Agent{opts: opts, log: log, sessions: map[sdk.SessionId]*session{}}
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
	return sdk.InitializeResponse{
		ProtocolVersion: v,
		AgentInfo:       &sdk.Implementation{Name: a.opts.Name, Title: sdk.Ptr("mm"), Version: a.opts.Version},
		AgentCapabilities: sdk.AgentCapabilities{
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{
				Close: &sdk.SessionCloseCapabilities{},
			},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate is a no-op: local model servers need no login; keys come
// from the environment.
func (a *Agent) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession starts a conversation in the client's working directory.
func (a *Agent) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if !filepath.IsAbs(p.Cwd) {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "cwd must be an absolute path, got " + p.Cwd})
	}
	if a.opts.Workspace == nil || a.opts.Engine == nil {
		return sdk.NewSessionResponse{}, sdk.NewInternalError(map[string]any{"error": "mm was built without a session factory"})
	}
	base, policy, err := a.opts.Workspace(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	id := sdk.SessionId("sess_" + randomHex(12))
	s := &session{id: id, agent: a}
	s.env = &editorEnv{Env: base, files: base, policy: policy, s: s}
	a.mu.Lock()
	fsCaps := a.client.Fs
	a.mu.Unlock()
	if fsCaps.ReadTextFile || fsCaps.WriteTextFile {
		s.env.files = &editorFiles{disk: base, s: s, read: fsCaps.ReadTextFile, write: fsCaps.WriteTextFile}
	}
	eng, err := a.opts.Engine(p.Cwd, s.env)
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	s.engine = eng
	a.mu.Lock()
	a.sessions[id] = s
	a.mu.Unlock()
	a.log.Info("session started", "session", id, "cwd", p.Cwd)
	return sdk.NewSessionResponse{SessionId: id}, nil
}

// Prompt runs one turn and answers with its stop reason. A failed turn
// (server error, guard) answers a JSON-RPC error carrying one actionable
// line, after the struggle note was streamed.
func (a *Agent) Prompt(ctx context.Context, p sdk.PromptRequest) (resp sdk.PromptResponse, err error) {
	s := a.session(p.SessionId)
	if s == nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "unknown session " + string(p.SessionId)})
	}
	defer func() {
		if r := recover(); r != nil {
			a.log.Error("prompt panicked", "panic", r, "stack", string(debug.Stack()))
			resp, err = sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": fmt.Sprintf("internal error: %v", r)})
		}
	}()
	ctx, done, ok := s.begin(ctx)
	defer done()
	if !ok {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "session " + string(p.SessionId) + " is closed"})
	}
	end := s.run(ctx, promptText(p.Prompt))
	switch end.Reason {
	case engine.Cancelled:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case engine.Failed:
		// The message is the one actionable line itself: clients show it.
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: end.Err}
	case engine.MaxTokens:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTokens}, nil
	case engine.MaxTurns:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
	case engine.Refusal:
		return sdk.PromptResponse{StopReason: sdk.StopReasonRefusal}, nil
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// Cancel stops the session's current turn (A7): its context is cancelled,
// which stops the model stream, the running tool and pending permission
// prompts, and the prompt answers "cancelled".
func (a *Agent) Cancel(_ context.Context, p sdk.CancelNotification) error {
	s := a.session(p.SessionId)
	running := s != nil && s.cancel()
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
	a.log.Info("session closed", "session", p.SessionId)
	return sdk.CloseSessionResponse{}, nil
}

// ListSessions lists nothing yet: sessions are not persisted.
func (a *Agent) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}, nil
}

// ResumeSession is not advertised; a client calling it gets an error.
func (a *Agent) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound("session/resume")
}

// SetSessionConfigOption is not advertised yet.
func (a *Agent) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound("session/set_config_option")
}

// SetSessionMode is not advertised yet.
func (a *Agent) SetSessionMode(context.Context, sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, sdk.NewMethodNotFound("session/set_mode")
}

func (a *Agent) session(id sdk.SessionId) *session {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// cancelTurns cancels the running turn of every session (EOF on stdin).
func (a *Agent) cancelTurns() {
	a.mu.Lock()
	ss := make([]*session, 0, len(a.sessions))
	for _, s := range a.sessions {
		ss = append(ss, s)
	}
	a.mu.Unlock()
	for _, s := range ss {
		s.cancel()
	}
}

// closeAll waits for the running turns (their contexts were cancelled
// with the connection, so their tools' processes are being killed) and
// forgets every session.
func (a *Agent) closeAll() {
	a.wg.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.sessions)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(errors.New("crypto/rand failed: " + err.Error()))
	}
	return hex.EncodeToString(b)
}
