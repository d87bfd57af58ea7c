package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// world is the setting of one end-to-end test: the scripted model, a
// workspace, mm's environment, and the context that bounds the test. Its
// methods start mm in it, as the editor's agent or in line mode.
type world struct {
	t   *testing.T
	srv *llmtest.Server // nil: no model server
	dir string          // the workspace
	env []string        // mm's environment: mmEnv's, and what the test adds
	ctx context.Context
}

// newWorld serves testdata/scenarios/<name>.yaml ("": no server) to mm
// started with extra in its environment, in a new workspace.
func newWorld(t *testing.T, name string, extra ...string) *world {
	t.Helper()
	var srv *llmtest.Server
	if name != "" {
		srv = scenario(t, name)
	}
	return newWorldOn(t, srv, extra...)
}

// newWorldOn is newWorld with a server the test built (nil: none),
// closed when the test ends.
func newWorldOn(t *testing.T, srv *llmtest.Server, extra ...string) *world {
	t.Helper()
	if srv != nil {
		t.Cleanup(srv.Close)
	}
	return &world{t: t, srv: srv, dir: t.TempDir(), env: mmEnv(t, srv, extra...), ctx: testenv.Context(t)}
}

// write writes content to rel in the workspace and returns its path.
func (w *world) write(rel, content string) string {
	w.t.Helper()
	p := filepath.Join(w.dir, rel)
	writeFile(w.t, p, content)
	return p
}

// read is the content of rel in the workspace.
func (w *world) read(rel string) string {
	w.t.Helper()
	return readFile(w.t, filepath.Join(w.dir, rel))
}

// config makes yaml mm's config file (MM_CONFIG).
func (w *world) config(yaml string) {
	w.t.Helper()
	cfg := filepath.Join(w.t.TempDir(), "agent.yaml")
	writeFile(w.t, cfg, yaml)
	w.env = append(w.env, "MM_CONFIG="+cfg)
}

// userConfig makes yaml the user's own config (~/.config/mm/agent.yaml).
func (w *world) userConfig(yaml string) {
	w.t.Helper()
	writeFile(w.t, filepath.Join(homeOf(w.env), ".config", "mm", "agent.yaml"), yaml)
}

// trust trusts the workspace's config as it is now (mm trust --yes).
func (w *world) trust() {
	w.t.Helper()
	trusted(w.t, w.dir, w.env)
}

// agent is `mm acp` served in this process in dir with env.
func agent(dir string, env []string) acptest.ServeFunc {
	return func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
		if code := run(ctx, environment{vars: config.Env(env), dir: dir}, []string{"acp"}, stdin, stdout, stderr); code != exitOK {
			return fmt.Errorf("exit status %d", code)
		}
		return nil
	}
}

// mmCmd is the command of the real mm binary with args, in dir with env.
func mmCmd(t *testing.T, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(mmBin(t), args...)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// serveMM serves `mm acp` in this process, in dir with env, to the fake
// editor: the editor's view of mm without a process per test, so the
// tests that use it run in parallel. What only a process shows (its
// children, signals, its stdout as a whole) needs startMM;
// MM_TEST_BINARY=1 serves every test from the binary.
func serveMM(t *testing.T, dir string, env []string, opts acptest.Options) *editor {
	t.Helper()
	if os.Getenv("MM_TEST_BINARY") == "1" {
		return startMM(t, dir, env, opts)
	}
	if opts.Env == nil {
		opts.Env = env // the editor started mm: its terminals share mm's environment
	}
	return &editor{Editor: acptest.Serve(t, agent(dir, env), opts), t: t, dir: dir, ctx: testenv.Context(t)}
}

// startMM runs the real `mm acp` binary in dir with env, for the fake
// editor: for what only a process shows.
func startMM(t *testing.T, dir string, env []string, opts acptest.Options) *editor {
	t.Helper()
	if opts.Env == nil {
		opts.Env = env
	}
	return &editor{Editor: acptest.Start(t, mmCmd(t, dir, env, "acp"), opts), t: t, dir: dir, ctx: testenv.Context(t)}
}

// serveWire serves `mm acp` in this process and speaks raw JSON-RPC lines
// to it; MM_TEST_BINARY=1 runs the binary.
func serveWire(t *testing.T, dir string, env []string) *acptest.Wire {
	t.Helper()
	if os.Getenv("MM_TEST_BINARY") == "1" {
		return startWire(t, dir, env)
	}
	return acptest.ServeWire(t, agent(dir, env))
}

// startWire is serveWire with the real binary: for what only a process
// shows. Each of also changes the command before it starts.
func startWire(t *testing.T, dir string, env []string, also ...func(*exec.Cmd)) *acptest.Wire {
	t.Helper()
	cmd := mmCmd(t, dir, env, "acp")
	for _, f := range also {
		f(cmd)
	}
	return acptest.StartWire(t, cmd)
}

// serve serves `mm acp` in the world, in process, to an editor with opts.
func (w *world) serve(opts acptest.Options) *editor {
	w.t.Helper()
	return serveMM(w.t, w.dir, w.env, opts)
}

// start runs the mm binary in the world, for an editor with opts.
func (w *world) start(opts acptest.Options) *editor {
	w.t.Helper()
	return startMM(w.t, w.dir, w.env, opts)
}

// session serves mm in the world to an editor with opts (the first of
// them, or none) and opens a session in the workspace.
func (w *world) session(opts ...acptest.Options) *editor {
	w.t.Helper()
	var o acptest.Options
	if len(opts) > 0 {
		o = opts[0]
	}
	e := w.serve(o)
	e.open()
	return e
}

// wire serves mm in the world in process and speaks raw lines to it.
func (w *world) wire() *acptest.Wire {
	w.t.Helper()
	return serveWire(w.t, w.dir, w.env)
}

// line runs mm in process in the world with args and stdin, and returns
// stdout, stderr and the exit code.
func (w *world) line(stdin string, args ...string) (string, string, int) {
	w.t.Helper()
	return runInProcess(w.t, w.dir, w.env, stdin, args...)
}

// editor is the fake editor connected to an mm, and the session it opened.
type editor struct {
	*acptest.Editor
	t   *testing.T
	dir string // where sessions open
	ctx context.Context
	id  sdk.SessionId // the session open() opened
}

// open opens a session in the editor's directory with the given MCP
// servers (initializing first, and checking that mm answers) and makes
// it the editor's session.
func (e *editor) open(mcp ...sdk.McpServer) sdk.SessionId {
	e.t.Helper()
	if init := e.Initialize(e.ctx); init.AgentInfo == nil || init.AgentInfo.Name != "mm" {
		e.t.Errorf("agent info = %+v", init.AgentInfo)
	}
	e.id = e.NewSession(e.ctx, e.dir, mcp...)
	return e.id
}

// prompt sends text in the editor's session.
func (e *editor) prompt(text string) (sdk.PromptResponse, error) {
	return e.Prompt(e.ctx, e.id, text)
}

// turn sends text in the editor's session and returns the answer; a
// prompt that fails fails the test.
func (e *editor) turn(text string) sdk.PromptResponse {
	e.t.Helper()
	resp, err := e.prompt(text)
	if err != nil {
		e.t.Fatalf("prompt %q: %v", text, err)
	}
	return resp
}

// endTurn is turn, where any end but end_turn fails the test.
func (e *editor) endTurn(text string) sdk.PromptResponse {
	e.t.Helper()
	resp := e.turn(text)
	if resp.StopReason != sdk.StopReasonEndTurn {
		e.t.Fatalf("prompt %q ended %q, want end_turn", text, resp.StopReason)
	}
	return resp
}

// async sends text in the editor's session in the background.
func (e *editor) async(text string) <-chan acptest.Answer {
	return e.PromptAsync(e.ctx, e.id, text)
}

// answer is the text the editor shows of mm's messages so far.
func (e *editor) answer() string { return acptest.MessageText(e.Updates()) }

// asked is the permission requests so far, failing the test unless there
// are n.
func (e *editor) asked(n int) []sdk.RequestPermissionRequest {
	e.t.Helper()
	perms := e.Permissions()
	if len(perms) != n {
		e.t.Fatalf("%d permission requests, want %d:\n%s", len(perms), n, strings.Join(acptest.Describe(e.Updates()), "\n"))
	}
	return perms
}

// lastMessage is the last message of the model's last request.
func lastMessage(srv *llmtest.Server) llmtest.Message {
	reqs := srv.Requests()
	if len(reqs) == 0 {
		return llmtest.Message{}
	}
	return reqs[len(reqs)-1].Last()
}

// writeAll writes each file (a path relative to the workspace → its
// content) in the workspace.
func (w *world) writeAll(files map[string]string) {
	w.t.Helper()
	for rel, content := range files {
		w.write(rel, content)
	}
}

// transcript is a model request's messages, one "role: content" a line.
func transcript(r llmtest.Recorded) string {
	var said []string
	for _, m := range r.Messages {
		said = append(said, m.Role+": "+m.Content)
	}
	return strings.Join(said, "\n")
}
