package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/mm-agent/mm/permit/confine"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// mmBuild builds the real mm for the tests that run it as a process,
// once, from TestMain on in the background: the in-process tests — most
// of them — start at once, and those that run the binary wait for it.
// With -race the binary is race-built too.
var mmBuild = sync.OnceValues(func() (string, error) {
	var flags []string
	if raceBuild {
		flags = append(flags, "-race")
	}
	return testenv.Build(".", "mm", flags...)
})

// mmBin is the path of the real mm, built.
func mmBin(t testing.TB) string {
	t.Helper()
	bin, err := mmBuild()
	if err != nil {
		t.Fatalf("building mm: %v", err)
	}
	return bin
}

// copyFile copies src to dst with mode perm.
func copyFile(t testing.TB, src, dst string, perm os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, perm); err != nil {
		t.Fatal(err)
	}
}

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__sandbox" {
		// An in-process mm confines bash commands by running its own
		// executable — this test binary — as the sandbox helper.
		os.Exit(confine.Main(os.Args[2:], os.Stderr))
	}
	built := make(chan struct{})
	go func() {
		defer close(built)
		mmBuild()
	}()
	code := m.Run()
	<-built
	os.Exit(code)
}

// scenario loads testdata/scenarios/<name>.yaml and serves it.
func scenario(t *testing.T, name string) *llmtest.Server {
	t.Helper()
	sc, err := llmtest.Load(filepath.Join("testdata", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	return srv
}

// mmEnv is the environment of an mm under test: the fake server, no user
// config, logs to a file the test prints on failure.
func mmEnv(t *testing.T, srv *llmtest.Server, extra ...string) []string {
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"MM_LOG=" + filepath.Join(home, "mm.log"),
		"MM_PROVIDER=llamacpp",
		"MM_MODEL=fake-model",
	}
	env = append(env, testenv.GoHome(t, home)...)
	if srv != nil {
		env = append(env, "MM_BASE_URL="+srv.URL())
	}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(home, "mm.log")); err == nil {
				t.Logf("mm log:\n%s", b)
			}
		}
	})
	return append(env, extra...)
}

// agentProc is an `mm acp` with an SDK client connected to it: served in
// this process (startAgent) or a real process (startAgentProcess).
type agentProc struct {
	cmd    *exec.Cmd // the process; nil when served in process
	conn   *sdk.ClientSideConnection
	client *testClient
	stdin  io.WriteCloser // closing it is the editor going away (EOF)
	stdout *recorder      // every byte mm wrote on stdout
	sent   *recorder      // every byte the client wrote to mm
	stderr *recorder      // what mm wrote on stderr, when served in process
	// done gets how mm ended: nil, or its exit status as an error (or
	// the panic that ended it, in process).
	done chan error
}

// startAgent serves `mm acp` in this process — run with the test's
// environment and dir, over pipes — and connects the acp-go-sdk client
// side. It is the editor's view of mm without a process per test, so the
// tests that use it can run in parallel. What only a process shows (its
// children, signals, its stdout as a whole) needs startAgentProcess;
// MM_TEST_BINARY=1 serves every test from the binary.
func startAgent(t *testing.T, dir string, env []string) *agentProc {
	t.Helper()
	if os.Getenv("MM_TEST_BINARY") == "1" {
		return startAgentProcess(t, dir, env)
	}
	inR, inW := io.Pipe()   // editor → mm
	outR, outW := io.Pipe() // mm → editor
	p := &agentProc{client: newTestClient(env), stdin: inW, stdout: &recorder{}, sent: &recorder{}, stderr: &recorder{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		p.done <- serve(ctx, environment{vars: config.Env(env), dir: dir}, inR, io.MultiWriter(p.stdout, outW), p.stderr)
		// What a process exit does to its pipes: the editor reads EOF,
		// and its writes fail.
		outW.Close()
		inR.Close()
	}()
	p.conn = sdk.NewClientSideConnection(p.client, io.MultiWriter(inW, p.sent), outR)
	p.conn.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(func() {
		defer cancel()
		inW.Close()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Errorf("mm did not return within 10 s of stdin closing")
			cancel()
			<-ended
		}
		if t.Failed() && p.stderr.String() != "" {
			t.Logf("mm stderr:\n%s", p.stderr)
		}
	})
	return p
}

// serve is `mm acp` run in process: the exit status as an error, or the
// panic that would have ended the process.
func serve(ctx context.Context, env environment, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mm panicked: %v\n%s", r, debug.Stack())
		}
	}()
	if code := run(ctx, env, []string{"acp"}, stdin, stdout, stderr); code != exitcode.OK {
		return fmt.Errorf("exit status %d", code)
	}
	return nil
}

// startAgentProcess runs the real `mm acp` binary in dir and connects the
// acp-go-sdk client side: for what only a process shows.
func startAgentProcess(t *testing.T, dir string, env []string) *agentProc {
	t.Helper()
	cmd := exec.Command(mmBin(t), "acp")
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p := &agentProc{cmd: cmd, client: newTestClient(env), stdin: stdin, stdout: rec, sent: &recorder{}, done: make(chan error, 1)}
	pr, pw := io.Pipe()
	go func() {
		// Recorded before the client sees it, so order checks on the raw
		// stream never run ahead of it.
		_, err := io.Copy(io.MultiWriter(rec, pw), out)
		pw.CloseWithError(err)
	}()
	p.conn = sdk.NewClientSideConnection(p.client, io.MultiWriter(stdin, p.sent), pr)
	p.conn.SetLogger(slog.New(slog.DiscardHandler))
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Errorf("mm did not exit within 10 s of stdin closing")
			<-p.done
		}
	})
	return p
}

// session initializes and opens a session in dir.
func (p *agentProc) session(t *testing.T, ctx context.Context, dir string) sdk.SessionId {
	t.Helper()
	return p.sessionWith(t, ctx, dir, sdk.ClientCapabilities{}, nil)
}

// sessionWith initializes advertising caps and opens a session in dir
// with the given MCP servers.
func (p *agentProc) sessionWith(t *testing.T, ctx context.Context, dir string, caps sdk.ClientCapabilities, mcp []sdk.McpServer) sdk.SessionId {
	t.Helper()
	init, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if init.AgentInfo == nil || init.AgentInfo.Name != "mm" {
		t.Errorf("agent info = %+v", init.AgentInfo)
	}
	if mcp == nil {
		mcp = []sdk.McpServer{}
	}
	s, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: mcp})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	return s.SessionId
}

func (p *agentProc) prompt(ctx context.Context, id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	return p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

// recorder keeps a copy of a stream.
type recorder struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced at each write, once waited on
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
	return r.buf.Write(p)
}

// waitFor waits until the stream holds s.
func (r *recorder) waitFor(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		found := strings.Contains(r.buf.String(), s)
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		changed := r.changed
		r.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("timed out waiting for %q in the stream", s)
		}
	}
}

func (r *recorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// testClient is the editor side: it records every update and permission
// request, and answers permission requests with a chosen option kind.
type testClient struct {
	mu      sync.Mutex
	updates []sdk.SessionUpdate
	perms   []sdk.RequestPermissionRequest
	choose  sdk.PermissionOptionKind // "" answers cancelled
	asked   chan struct{}            // gets a value per permission request
	hold    chan struct{}            // when set, permission answers wait on it
	// onAsk, when set, runs while a permission request is open, before it
	// is answered: the user at work in the editor.
	onAsk   func(sdk.RequestPermissionRequest)
	changed chan struct{} // closed and replaced at each update
	// elicit answers elicitation/create (advertise it in the caps too);
	// nil answers cancel.
	elicit func(sdk.UnstableCreateElicitationRequest) sdk.UnstableCreateElicitationResponse

	// The editor's files: fs/* calls in order ("read path", "write
	// path"), and the unsaved buffers by path (a write lands here, not on
	// disk, as in an editor).
	fsCalls []string
	buffers map[string]string

	// The editor's terminals (real processes), and the terminal/* calls
	// in order ("create", "wait", "output", "kill", "release"). env is
	// the editor's environment, the one mm was started with too: its
	// terminals start from it (nil: this process's).
	env       []string
	terms     map[string]*clientTerminal
	termCalls []string
}

// clientTerminal is a command the editor runs and shows.
type clientTerminal struct {
	cmd  *exec.Cmd
	out  *recorder
	done chan struct{} // closed when the command exited
}

func newTestClient(env []string) *testClient {
	return &testClient{choose: sdk.PermissionOptionKindAllowOnce, asked: make(chan struct{}, 16), changed: make(chan struct{}), env: env}
}

func (c *testClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

// waitUpdates waits until the updates received so far satisfy ok.
func (c *testClient) waitUpdates(t *testing.T, what string, ok func([]sdk.SessionUpdate) bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		us, changed := c.updates, c.changed
		c.mu.Unlock()
		if ok(us) {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("timed out waiting for %s; updates:\n%s", what, strings.Join(describe(us), "\n"))
		}
	}
}

func (c *testClient) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms = append(c.perms, p)
	choose, hold, onAsk := c.choose, c.hold, c.onAsk
	c.mu.Unlock()
	c.asked <- struct{}{}
	if onAsk != nil {
		onAsk(p)
	}
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
		}
	}
	for _, o := range p.Options {
		if o.Kind == choose {
			return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *testClient) snapshot() ([]sdk.SessionUpdate, []sdk.RequestPermissionRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionUpdate(nil), c.updates...), append([]sdk.RequestPermissionRequest(nil), c.perms...)
}

var errNotOffered = errors.New("not offered by this client")

// ReadTextFile answers the buffer when there is one, else the disk's text,
// as an editor does.
func (c *testClient) ReadTextFile(_ context.Context, r sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fsCalls = append(c.fsCalls, "read "+r.Path)
	if b, ok := c.buffers[r.Path]; ok {
		return sdk.ReadTextFileResponse{Content: b}, nil
	}
	data, err := os.ReadFile(r.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.ReadTextFileResponse{Content: string(data)}, nil
}

// WriteTextFile keeps the text in the buffer, unsaved.
func (c *testClient) WriteTextFile(_ context.Context, r sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fsCalls = append(c.fsCalls, "write "+r.Path)
	if c.buffers == nil {
		c.buffers = map[string]string{}
	}
	c.buffers[r.Path] = r.Content
	return sdk.WriteTextFileResponse{}, nil
}
func (c *testClient) termCall(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.termCalls = append(c.termCalls, what)
}

func (c *testClient) term(id string) (*clientTerminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.terms[id]
	if t == nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "unknown terminal " + id})
	}
	return t, nil
}

// CreateTerminal runs the command for real, as an editor does.
func (c *testClient) CreateTerminal(_ context.Context, r sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	c.termCall("create")
	cmd := exec.Command(r.Command, r.Args...)
	if r.Cwd != nil {
		cmd.Dir = *r.Cwd
	}
	cmd.Env = append([]string(nil), c.env...)
	if c.env == nil {
		cmd.Env = os.Environ()
	}
	for _, e := range r.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	out := &recorder{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	t := &clientTerminal{cmd: cmd, out: out, done: make(chan struct{})}
	go func() { cmd.Wait(); close(t.done) }()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.terms == nil {
		c.terms = map[string]*clientTerminal{}
	}
	id := fmt.Sprintf("term-%d", len(c.terms)+1)
	c.terms[id] = t
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *testClient) KillTerminal(_ context.Context, r sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	c.termCall("kill")
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	<-t.done
	return sdk.KillTerminalResponse{}, nil
}

func (c *testClient) TerminalOutput(_ context.Context, r sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	c.termCall("output")
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	resp := sdk.TerminalOutputResponse{Output: t.out.String()}
	select {
	case <-t.done:
		resp.ExitStatus = exitStatus(t.cmd.ProcessState)
	default:
	}
	return resp, nil
}

func (c *testClient) ReleaseTerminal(_ context.Context, r sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	c.termCall("release")
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	c.mu.Lock()
	delete(c.terms, r.TerminalId)
	c.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

func (c *testClient) WaitForTerminalExit(ctx context.Context, r sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	c.termCall("wait")
	t, err := c.term(r.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	st := exitStatus(t.cmd.ProcessState)
	return sdk.WaitForTerminalExitResponse{ExitCode: st.ExitCode, Signal: st.Signal}, nil
}

func exitStatus(ps *os.ProcessState) *sdk.TerminalExitStatus {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &sdk.TerminalExitStatus{Signal: sdk.Ptr(ws.Signal().String())}
	}
	return &sdk.TerminalExitStatus{ExitCode: sdk.Ptr(ps.ExitCode())}
}

// describe renders updates one per line, for order assertions and logs.
func describe(us []sdk.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		switch {
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			out = append(out, "message: "+u.AgentMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
			out = append(out, "thought: "+u.AgentThoughtChunk.Content.Text.Text)
		case u.ToolCall != nil:
			out = append(out, fmt.Sprintf("tool_call %s %s %s %q", u.ToolCall.ToolCallId, u.ToolCall.Kind, u.ToolCall.Status, u.ToolCall.Title))
		case u.ToolCallUpdate != nil:
			s := fmt.Sprintf("tool_call_update %s", u.ToolCallUpdate.ToolCallId)
			if u.ToolCallUpdate.Status != nil {
				s += " " + string(*u.ToolCallUpdate.Status)
			}
			for _, c := range u.ToolCallUpdate.Content {
				switch {
				case c.Diff != nil:
					s += " diff:" + filepath.Base(c.Diff.Path)
				case c.Content != nil:
					s += " text"
				}
			}
			out = append(out, s)
		case u.UsageUpdate != nil:
			out = append(out, fmt.Sprintf("usage %d/%d", u.UsageUpdate.Used, u.UsageUpdate.Size))
		default:
			out = append(out, "other")
		}
	}
	return out
}

// messageText joins the agent message chunks.
func messageText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitForProcessesOf waits, up to d, until no process runs with HOME set
// to home: what a test started may outlive it (acpx's queue owner) and
// still write there when the test removes the directory.
func waitForProcessesOf(t *testing.T, home string, d time.Duration) {
	t.Helper()
	want := []byte("HOME=" + home + "\x00")
	deadline := time.Now().Add(d)
	for {
		var left []string
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err == nil && bytes.Contains(env, want) {
				left = append(left, e.Name())
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes still running in the test's home after %v: %v", d, left)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLogged waits until mm's log (MM_LOG in env) has a line containing
// text: the way a test knows that something mm does in the background
// (the window probe, say) has ended before it goes on.
func waitLogged(t *testing.T, ctx context.Context, env []string, text string) {
	t.Helper()
	var path string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MM_LOG="); ok {
			path = v
		}
	}
	if path == "" {
		t.Fatal("waitLogged: no MM_LOG in the environment")
	}
	for {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(text)) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("mm never logged %q", text)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
