package acp_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp"
	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/files"
	"github.com/mm-agent/mm/tools/workspace"
)

// editorTest is an acp.Agent whose sessions are real engine sessions over
// the scripted model, running the file tools in a workspace on disk,
// served in process to the fake editor.
type editorTest struct {
	*acptest.Editor
	srv   *llmtest.Server
	dir   string // the workspace
	ctx   context.Context
	store *store.Store
}

// serveAgent starts the model server on steps, the agent (its Options
// changed by mod when not nil) and an editor with eo.
func serveAgent(t *testing.T, steps []llmtest.Step, eo acptest.Options, mod func(*acp.Options)) *editorTest {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Scenario{NCtx: 32768, Steps: steps})
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*acptest.Hung)
	t.Cleanup(cancel)
	e := &editorTest{srv: srv, dir: t.TempDir(), ctx: ctx, store: store.Open(t.TempDir(), nil)}
	model := llm.New(llm.Options{Provider: "llamacpp", BaseURL: srv.URL(), RetryDelays: []time.Duration{}})
	b := &acp.Builder{
		Workspace: func(cwd string, dirs []string) (tools.Env, *permit.Policy, error) {
			policy := permit.NewPolicy(false, nil, nil)
			ws, err := workspace.New(workspace.Options{Cwd: cwd, Roots: append([]string{cwd}, dirs...), Policy: policy})
			return ws, policy, err
		},
		Engine: func(id, cwd string, env tools.Env, extra []tools.Tool) (*engine.Session, error) {
			return engine.NewSession(engine.Options{
				Model: model, ModelName: "fake-model", Tools: tools.NewRegistry(append(files.New(files.Options{}), extra...)...),
				Env: env, Sampling: llm.Sampling{MaxTokens: 4096}, Store: e.store, ID: id,
			}), nil
		},
	}
	opts := acp.Options{Version: "test", Store: e.store, Builder: func() (*acp.Builder, error) { return b, nil }}
	if mod != nil {
		mod(&opts)
	}
	e.Editor = acptest.Serve(t, func(ctx context.Context, in io.Reader, out, errOut io.Writer) error {
		opts.Logger = slog.New(slog.NewTextHandler(errOut, nil))
		return acp.Serve(ctx, acp.New(opts), in, out)
	}, eo)
	return e
}

// write is the model's write_file call of path with text.
func write(path, text string) llmtest.Step {
	return llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Args: map[string]any{"path": path, "content": text}}}}
}

// lastMessage is the last message of the model's last request.
func (e *editorTest) lastMessage(t *testing.T) llmtest.Message {
	t.Helper()
	reqs := e.srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	m := reqs[len(reqs)-1].Messages
	return m[len(m)-1]
}

// TestSessionLifecycle: initialize says who answers and what it serves;
// a session streams its answer and ends the turn; session/list finds it
// in its workspace; once closed it takes no prompt, and the model is
// never asked again.
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	e := serveAgent(t, []llmtest.Step{{Content: "Hello from the model."}}, acptest.Options{}, nil)
	init := e.Initialize(e.ctx)
	if init.AgentInfo == nil || init.AgentInfo.Name != "mm" || init.AgentInfo.Version != "test" {
		t.Errorf("agentInfo = %+v", init.AgentInfo)
	}
	caps := init.AgentCapabilities
	if !caps.LoadSession || caps.SessionCapabilities.List == nil || caps.SessionCapabilities.Close == nil || !caps.McpCapabilities.Http {
		t.Errorf("a store and a builder must advertise load, list, close and MCP over HTTP: %+v", caps)
	}
	id := e.NewSession(e.ctx, e.dir)
	resp, err := e.Prompt(e.ctx, id, "hi")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v; want end_turn", resp, err)
	}
	if got := acptest.MessageText(e.Updates()); got != "Hello from the model." {
		t.Errorf("the editor shows %q", got)
	}
	if m := e.lastMessage(t); m.Role != "user" || !strings.HasSuffix(m.Content, "hi") {
		t.Errorf("the model was asked %+v, want the prompt last", m)
	}
	list, err := e.Conn.ListSessions(e.ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(e.dir)})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionId != id {
		t.Errorf("session/list in the workspace = %+v, %v; want the session", list, err)
	}
	if _, err := e.Conn.CloseSession(e.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	if _, err := e.Prompt(e.ctx, id, "still there?"); err == nil {
		t.Error("a closed session took a prompt")
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// TestPermissionRoundTrip: a write asks the editor under the tool call's
// own id, with the four options; the option picked decides the write, a
// refusal leaves no file and tells the model, and "always" is asked once
// for the same effect.
func TestPermissionRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		choose  sdk.PermissionOptionKind
		asked   int
		written bool
		told    string // in the model's last tool result
	}{
		{sdk.PermissionOptionKindAllowOnce, 2, true, "wrote notes.txt"},
		{sdk.PermissionOptionKindAllowAlways, 1, true, "wrote notes.txt"},
		{sdk.PermissionOptionKindRejectOnce, 2, false, "declined"},
		{"", 2, false, "cancelled"},
	} {
		t.Run(string(c.choose), func(t *testing.T) {
			t.Parallel()
			e := serveAgent(t, []llmtest.Step{write("notes.txt", "one\n"), write("notes.txt", "two\n"), {Content: "Done."}}, acptest.Options{}, nil)
			e.Choose(c.choose)
			id := e.NewSession(e.ctx, e.dir)
			if _, err := e.Prompt(e.ctx, id, "take notes"); err != nil {
				t.Fatal(err)
			}
			perms := e.Permissions()
			if len(perms) != c.asked {
				t.Fatalf("%d questions, want %d", len(perms), c.asked)
			}
			if perms[0].ToolCall.ToolCallId != "call_1" {
				t.Errorf("asked under %q, want the tool call's id", perms[0].ToolCall.ToolCallId)
			}
			var kinds []sdk.PermissionOptionKind
			for _, o := range perms[0].Options {
				kinds = append(kinds, o.Kind)
			}
			if want := []sdk.PermissionOptionKind{"allow_once", "allow_always", "reject_once", "reject_always"}; !slices.Equal(kinds, want) {
				t.Errorf("options %v, want %v", kinds, want)
			}
			b, err := os.ReadFile(filepath.Join(e.dir, "notes.txt"))
			if c.written != (err == nil) || (c.written && string(b) != "two\n") {
				t.Errorf("notes.txt = %q, %v; written: want %v", b, err, c.written)
			}
			reqs := e.srv.Requests()
			m := reqs[len(reqs)-1].Messages
			if r := m[len(m)-1]; r.Role != "tool" || !strings.Contains(strings.ToLower(r.Content), c.told) {
				t.Errorf("the model was told %q, want %q in it", r.Content, c.told)
			}
		})
	}
}

// TestCancelMidAnswer: session/cancel while the model streams ends the
// prompt "cancelled" — not an error — with the words already streamed
// shown, and the session serves the next prompt.
func TestCancelMidAnswer(t *testing.T) {
	t.Parallel()
	stall := 3 // the role, then two pieces of words
	e := serveAgent(t, []llmtest.Step{{Content: "Partial words and more", ChunkSize: 8, StallAfter: &stall}, {Content: "Back."}}, acptest.Options{}, nil)
	id := e.NewSession(e.ctx, e.dir)
	done := e.PromptAsync(e.ctx, id, "talk")
	e.WaitMessage("Partial")
	e.Cancel(e.ctx, id)
	if a := acptest.Await(t, "the cancelled prompt", done); a.Err != nil || a.Resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("cancelled prompt = %+v, %v; want stopReason cancelled", a.Resp, a.Err)
	}
	if resp, err := e.Prompt(e.ctx, id, "again"); err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("the prompt after a cancel = %+v, %v", resp, err)
	}
	if got := acptest.MessageText(e.Updates()); !strings.HasPrefix(got, "Partial") || !strings.HasSuffix(got, "Back.") {
		t.Errorf("the editor shows %q", got)
	}
}

// TestCancelWhileAsking: a cancel while the permission question is open
// withdraws it: the prompt answers cancelled and nothing is written.
func TestCancelWhileAsking(t *testing.T) {
	t.Parallel()
	e := serveAgent(t, []llmtest.Step{write("notes.txt", "one\n"), {Content: "never asked for"}}, acptest.Options{}, nil)
	release := e.Hold()
	defer release()
	id := e.NewSession(e.ctx, e.dir)
	done := e.PromptAsync(e.ctx, id, "take notes")
	select {
	case <-e.Asked():
	case <-time.After(acptest.Hung):
		t.Fatal("no permission question")
	}
	e.Cancel(e.ctx, id)
	if a := acptest.Await(t, "the prompt cancelled while asking", done); a.Err != nil || a.Resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("prompt = %+v, %v; want stopReason cancelled", a.Resp, a.Err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "notes.txt")); !os.IsNotExist(err) {
		t.Errorf("notes.txt exists after a cancelled question: %v", err)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
}

// TestSteeringOutcomes: initialize advertises steering; a correction sent
// while the turn waits on the user is injected and reaches the model
// right after the tool's result; an idle session starts a turn with it,
// or, when the editor asked for that, answers promptRequired and starts
// nothing.
func TestSteeringOutcomes(t *testing.T) {
	t.Parallel()
	e := serveAgent(t, []llmtest.Step{write("notes.txt", "one\n"), {Content: "Using b."}, {Content: "Started."}}, acptest.Options{}, nil)
	if st, _ := e.Initialize(e.ctx).Meta["steering"].(map[string]any); st["supported"] != true {
		t.Errorf("initialize _meta = %v, want steering.supported", e.Initialize(e.ctx).Meta)
	}
	release := e.Hold()
	id := e.NewSession(e.ctx, e.dir)
	done := e.PromptAsync(e.ctx, id, "use a")
	<-e.Asked()
	if got := e.Steer(e.ctx, id, "use b instead", nil); got.Outcome != "injected" {
		t.Errorf("steering a running turn = %+v, want injected", got)
	}
	release()
	if a := acptest.Await(t, "the steered prompt", done); a.Err != nil || a.Resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("steered prompt = %+v, %v", a.Resp, a.Err)
	}
	if m := e.lastMessage(t); m.Role != "user" || m.Content != "use b instead" {
		t.Errorf("the request after the tool ends with %+v, want the correction", m)
	}
	idle := map[string]any{"steering": map[string]any{"idleBehavior": "promptRequired"}}
	if got := e.Steer(e.ctx, id, "and then?", idle); got.Outcome != "promptRequired" || got.Reason != "noRunningTurn" {
		t.Errorf("steering an idle session that asked for promptRequired = %+v", got)
	}
	if got := e.Steer(e.ctx, id, "start over", nil); got.Outcome != "startedNewTurn" {
		t.Errorf("steering an idle session = %+v, want startedNewTurn", got)
	}
	e.WaitMessage("Started.")
	if n := len(e.srv.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3 (promptRequired starts nothing)", n)
	}
}

// TestFilesThroughTheEditor: with the fs capability the tools read the
// editor's unsaved buffer, not the disk, and a write lands in the buffer;
// the disk keeps its bytes.
func TestFilesThroughTheEditor(t *testing.T) {
	t.Parallel()
	read := llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": "main.txt"}}}}
	fs := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}
	e := serveAgent(t, []llmtest.Step{read, write("main.txt", "saved by mm\n"), {Content: "Done."}}, acptest.Options{Caps: fs}, nil)
	path := filepath.Join(e.dir, "main.txt")
	if err := os.WriteFile(path, []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.SetBuffer(path, "in the buffer\n")
	id := e.NewSession(e.ctx, e.dir)
	if _, err := e.Prompt(e.ctx, id, "rewrite main.txt"); err != nil {
		t.Fatal(err)
	}
	reqs := e.srv.Requests()
	if m := reqs[1].Messages; !strings.Contains(m[len(m)-1].Content, "in the buffer") {
		t.Errorf("read_file gave the model %q, want the buffer", m[len(m)-1].Content)
	}
	if b, _ := e.Buffer(path); b != "saved by mm\n" {
		t.Errorf("the buffer holds %q", b)
	}
	if b, _ := os.ReadFile(path); string(b) != "on disk\n" {
		t.Errorf("the disk holds %q: the write skipped the editor", b)
	}
	if calls := e.FileCalls(); !slices.Contains(calls, "read "+path) || !slices.Contains(calls, "write "+path) {
		t.Errorf("fs calls %v", calls)
	}
}

// TestLoadReplays: session/load in a new connection replays the stored
// conversation — the user's prompt and the answer — before it answers.
func TestLoadReplays(t *testing.T) {
	t.Parallel()
	e := serveAgent(t, []llmtest.Step{{Content: "Stored answer."}}, acptest.Options{}, nil)
	id := e.NewSession(e.ctx, e.dir)
	if _, err := e.Prompt(e.ctx, id, "remember this"); err != nil {
		t.Fatal(err)
	}
	e.Stop()
	again := serveAgent(t, nil, acptest.Options{}, func(o *acp.Options) { o.Store = e.store })
	again.Load(again.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: e.dir})
	user, answer := acptest.UserText(again.Updates()), acptest.MessageText(again.Updates())
	if !strings.Contains(user, "remember this") || answer != "Stored answer." {
		t.Errorf("replay: user %q, agent %q", user, answer)
	}
}

// errAnyServer is the line of a machine with no model server.
var errAnyServer = errors.New("mm needs a model server: run mm setup in a terminal")

// TestAuthRequiredOffersSetup: with no model server to use, session/new
// answers auth_required with the one line saying what to do, and
// initialize lists the set-up the editor can offer.
func TestAuthRequiredOffersSetup(t *testing.T) {
	t.Parallel()
	none := func(context.Context) error { return errAnyServer }
	e := serveAgent(t, nil, acptest.Options{Caps: sdk.ClientCapabilities{Auth: sdk.AuthCapabilities{Terminal: true}}}, func(o *acp.Options) {
		o.Setup = &acp.Setup{Args: []string{"setup"}, Ready: none}
	})
	var ids []string
	for _, m := range e.Initialize(e.ctx).AuthMethods {
		switch {
		case m.Terminal != nil:
			ids = append(ids, m.Terminal.Id)
		case m.Agent != nil:
			ids = append(ids, m.Agent.Id)
		}
	}
	if !slices.Equal(ids, []string{"mm-setup", "mm-local-server"}) {
		t.Errorf("auth methods %v", ids)
	}
	_, err := e.Conn.NewSession(e.ctx, sdk.NewSessionRequest{Cwd: e.dir, McpServers: []sdk.McpServer{}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32000 || re.Message != errAnyServer.Error() {
		t.Errorf("session/new with no server = %v, want auth_required with the line", err)
	}
}
