package acptest

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// Options configure an Editor. The zero value advertises no client
// capability, picks allow_once at every permission request, cancels every
// form, and runs terminals in this process's environment.
type Options struct {
	// Caps are the client capabilities the editor advertises at
	// initialize. It answers fs and terminal requests whatever they say,
	// as the SDK routes them; the agent is the one that must not ask.
	Caps sdk.ClientCapabilities
	// Env is the editor's environment, the one its terminals start from;
	// nil is this process's.
	Env []string
}

// Editor is the editor side of an ACP connection: an acp-go-sdk client
// that records what the agent sends and answers what it asks as the test
// scripts it. It is safe for concurrent use.
type Editor struct {
	*link
	// Conn is the SDK connection, for the requests the Editor has no
	// method for.
	Conn *sdk.ClientSideConnection

	c    *client
	opts Options

	initOnce sync.Once
	init     sdk.InitializeResponse
}

// Serve serves agent in this process, over pipes, and connects an editor
// to it: the editor's view of an agent without a process per test, so
// that tests can run in parallel. When the test ends the editor closes
// the agent's input; an agent that does not end within ten seconds fails
// the test.
func Serve(t testing.TB, agent ServeFunc, opts Options) *Editor {
	t.Helper()
	return connect(t, serveLink(t, agent), opts)
}

// Start starts cmd, an agent speaking ACP on its stdio, and connects an
// editor to it: for what only a process shows (its exit, its children,
// its stdout as a whole). When the test ends the editor closes the
// agent's input; an agent that does not end within ten seconds fails the
// test and its process group is killed.
func Start(t testing.TB, cmd *exec.Cmd, opts Options) *Editor {
	t.Helper()
	return connect(t, startLink(t, cmd), opts)
}

func connect(t testing.TB, l *link, opts Options) *Editor {
	c := newClient(opts.Env)
	e := &Editor{link: l, c: c, opts: opts}
	e.Conn = sdk.NewClientSideConnection(c, l.writer(), l.stdout)
	e.Conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		l.leave()
		c.closeTerminals()
		if !t.Failed() && !t.Skipped() {
			CheckSchema(t, l.Sent.String(), l.Received.String())
		}
		l.logStderr()
	})
	return e
}

// Initialize negotiates the protocol, advertising Options.Caps, once;
// later calls return the first answer. A failure fails the test.
func (e *Editor) Initialize(ctx context.Context) sdk.InitializeResponse {
	e.t.Helper()
	var err error
	e.initOnce.Do(func() {
		e.init, err = e.Conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: e.opts.Caps})
	})
	if err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	return e.init
}

// NewSession initializes if that is not done yet and opens a session in
// cwd with the given MCP servers. A failure fails the test.
func (e *Editor) NewSession(ctx context.Context, cwd string, mcp ...sdk.McpServer) sdk.SessionId {
	e.t.Helper()
	return e.Open(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: mcp}).SessionId
}

// Open initializes if that is not done yet and sends session/new (no MCP
// servers when req has none). A failure fails the test.
func (e *Editor) Open(ctx context.Context, req sdk.NewSessionRequest) sdk.NewSessionResponse {
	e.t.Helper()
	e.Initialize(ctx)
	if req.McpServers == nil {
		req.McpServers = []sdk.McpServer{}
	}
	s, err := e.Conn.NewSession(ctx, req)
	if err != nil {
		e.t.Fatalf("session/new: %v", err)
	}
	return s
}

// Load initializes if that is not done yet and sends session/load (no
// MCP servers when req has none): the replay is then in Updates. A
// failure fails the test.
func (e *Editor) Load(ctx context.Context, req sdk.LoadSessionRequest) sdk.LoadSessionResponse {
	e.t.Helper()
	e.Initialize(ctx)
	if req.McpServers == nil {
		req.McpServers = []sdk.McpServer{}
	}
	s, err := e.Conn.LoadSession(ctx, req)
	if err != nil {
		e.t.Fatalf("session/load: %v", err)
	}
	return s
}

// Prompt sends text as the user's prompt in session id and returns the
// agent's answer.
func (e *Editor) Prompt(ctx context.Context, id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	return e.Conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

// Answer is how a prompt ended.
type Answer struct {
	Resp sdk.PromptResponse
	Err  error
}

// PromptAsync is Prompt in the background: the channel gets its answer.
func (e *Editor) PromptAsync(ctx context.Context, id sdk.SessionId, text string) <-chan Answer {
	done := make(chan Answer, 1)
	go func() {
		r, err := e.Prompt(ctx, id, text)
		done <- Answer{r, err}
	}()
	return done
}

// Await waits for the answer of a PromptAsync; none within Hung fails
// the test, what naming the prompt.
func Await(t testing.TB, what string, ch <-chan Answer) Answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(Hung):
		t.Fatalf("%s: no answer after %v", what, Hung)
		return Answer{}
	}
}

// Cancel sends session/cancel for session id.
func (e *Editor) Cancel(ctx context.Context, id sdk.SessionId) {
	e.t.Helper()
	if err := e.Conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		e.t.Fatalf("session/cancel: %v", err)
	}
}

// Stop closes the agent's input and waits for it to end; an agent that
// ends with an error fails the test.
func (e *Editor) Stop() {
	e.t.Helper()
	e.CloseInput()
	if err := e.WaitExit(); err != nil {
		e.t.Fatalf("the agent ended with %v", err)
	}
}

// Updates are the session updates received so far, in order.
func (e *Editor) Updates() []sdk.SessionUpdate {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	return append([]sdk.SessionUpdate(nil), e.c.updates...)
}

// Permissions are the permission requests received so far, in order.
func (e *Editor) Permissions() []sdk.RequestPermissionRequest {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	return append([]sdk.RequestPermissionRequest(nil), e.c.perms...)
}

// WaitUpdates waits until the updates received so far satisfy ok; what
// names the wait in the failure, which lists the updates.
func (e *Editor) WaitUpdates(what string, ok func([]sdk.SessionUpdate) bool) {
	e.t.Helper()
	timeout := time.After(Hung)
	for {
		e.c.mu.Lock()
		us, changed := e.c.updates, e.c.changed
		e.c.mu.Unlock()
		if ok(us) {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			e.t.Fatalf("timed out waiting for %s; updates:\n%s", what, strings.Join(Describe(us), "\n"))
		}
	}
}

// WaitMessage waits until the agent's message text holds text.
func (e *Editor) WaitMessage(text string) {
	e.t.Helper()
	e.WaitUpdates("the agent to say "+text, func(us []sdk.SessionUpdate) bool {
		return strings.Contains(MessageText(us), text)
	})
}

// Choose makes the editor pick, from now on, the first option of kind at
// each permission request; "" (or a kind not offered) answers cancelled.
func (e *Editor) Choose(kind sdk.PermissionOptionKind) {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	e.c.choose = kind
}

// OnAsk makes f run at each permission request while it is open, before
// the editor answers: the user at work in the editor meanwhile.
func (e *Editor) OnAsk(f func(sdk.RequestPermissionRequest)) {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	e.c.onAsk = f
}

// Hold keeps permission requests open until release is called (or the
// agent cancels the request): the user has not answered yet.
func (e *Editor) Hold() (release func()) {
	hold := make(chan struct{})
	e.c.mu.Lock()
	e.c.hold = hold
	e.c.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(hold) }) }
}

// Asked gets a value at each permission request, as it arrives.
func (e *Editor) Asked() <-chan struct{} { return e.c.asked }

// Elicit makes f answer the agent's forms (elicitation/create) from now
// on; nil cancels them. Advertise the capability in Options.Caps.
func (e *Editor) Elicit(f func(sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse) {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	e.c.elicit = f
}

// SetBuffer opens path in the editor with unsaved text: fs/read_text_file
// answers it instead of the disk's.
func (e *Editor) SetBuffer(path, text string) {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	e.c.buffers[path] = text
}

// Buffer is the editor's unsaved text of path, if it has a buffer: where
// fs/write_text_file writes, as an editor does.
func (e *Editor) Buffer(path string) (string, bool) {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	b, ok := e.c.buffers[path]
	return b, ok
}

// FileCalls are the fs/* requests received so far, in order: "read
// PATH", "write PATH".
func (e *Editor) FileCalls() []string {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	return append([]string(nil), e.c.fsCalls...)
}

// TerminalCalls are the terminal/* requests received so far, in order:
// "create", "wait", "output", "kill", "release".
func (e *Editor) TerminalCalls() []string {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	return append([]string(nil), e.c.termCalls...)
}

// TerminalPIDs are the process ids of the commands of the terminals not
// yet released.
func (e *Editor) TerminalPIDs() []int {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	var out []int
	for _, term := range e.c.terms {
		out = append(out, term.cmd.Process.Pid)
	}
	return out
}
