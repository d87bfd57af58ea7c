package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/permit/confine"

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
	testenv.WriteFile(w.t, p, content)
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
	testenv.WriteFile(w.t, cfg, yaml)
	w.env = append(w.env, "MM_CONFIG="+cfg)
}

// userConfig makes yaml the user's own config (~/.config/mm/agent.yaml).
func (w *world) userConfig(yaml string) {
	w.t.Helper()
	testenv.WriteFile(w.t, filepath.Join(homeOf(w.env), ".config", "mm", "agent.yaml"), yaml)
}

// trust trusts the workspace's config as it is now (mm trust --yes).
func (w *world) trust() {
	w.t.Helper()
	trusted(w.t, w.dir, w.env)
}

// agent is `mm acp` served in this process in dir with env.
func agent(dir string, env []string) acptest.ServeFunc {
	return func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
		if code := run(ctx, environment{vars: config.Env(env), dir: dir}, []string{"acp"}, stdin, stdout, stderr); code != exitcode.OK {
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
	e := serveMM(w.t, w.dir, w.env, opts)
	e.srv = w.srv
	return e
}

// start runs the mm binary in the world, for an editor with opts.
func (w *world) start(opts acptest.Options) *editor {
	w.t.Helper()
	e := startMM(w.t, w.dir, w.env, opts)
	e.srv = w.srv
	return e
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
	id  sdk.SessionId   // the session open() opened
	srv *llmtest.Server // the world's model, if any
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

// stalling sends text in the editor's session and returns once the
// model's answer to request step stalls, with words shown in the editor.
func (e *editor) stalling(text string, step int, words string) <-chan acptest.Answer {
	e.t.Helper()
	done := e.async(text)
	waitSignal(e.t, "the answer to "+text, e.srv.StepStalled(step))
	e.WaitMessage(words)
	return done
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

// trustedConfig writes the workspace's config files (.mm/NAME → YAML)
// and trusts them, as `mm trust` does.
func (w *world) trustedConfig(files map[string]string) *world {
	w.t.Helper()
	for name, yaml := range files {
		w.write(filepath.Join(".mm", name), yaml)
	}
	w.trust()
	return w
}

// mode sets the mode of the editor's session (session/set_mode).
func (e *editor) mode(id sdk.SessionModeId) {
	e.t.Helper()
	if _, err := e.Conn.SetSessionMode(e.ctx, sdk.SetSessionModeRequest{SessionId: e.id, ModeId: id}); err != nil {
		e.t.Fatalf("session/set_mode %s: %v", id, err)
	}
}

// lineOK is line, where an exit status other than 0 fails the test.
func (w *world) lineOK(stdin string, args ...string) (stdout, stderr string) {
	w.t.Helper()
	stdout, stderr, code := w.line(stdin, args...)
	if code != 0 {
		w.t.Fatalf("mm %s: exit %d:\n%s%s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout, stderr
}

// webPage serves body as contentType at every path but /robots.txt,
// which it has none of, until the test ends.
func webPage(t *testing.T, contentType, body string) *httptest.Server {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(page.Close)
	return page
}

// fetchThen is a model that fetches url (saving it as output, unless
// "") and then answers.
func fetchThen(t *testing.T, url, output, answer string) *llmtest.Server {
	args := map[string]any{"url": url}
	if output != "" {
		args["output"] = output
	}
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "fetch_content", Args: args}}},
		{Content: answer},
	}})
	t.Cleanup(srv.Close)
	return srv
}

// term runs mm with args in the world on a pseudo-terminal.
func (w *world) term(args ...string) *term {
	w.t.Helper()
	return startTerm(w.t, w.dir, w.env, args...)
}
