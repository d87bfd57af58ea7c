package agents

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/files"
	"github.com/mm-agent/mm/tools/workspace"
)

// asked records the questions that reached the asking session's user.
type asked struct{ reqs []tools.Approval }

func (a *asked) ask(_ context.Context, req tools.Approval) (permit.Answer, error) {
	a.reqs = append(a.reqs, req)
	return permit.AllowOnce, nil
}

// callerEnv is the asking session's real disk environment in a fresh
// workspace, whose user allows whatever they are asked; with yolo, its
// policy allows everything without asking.
func callerEnv(t *testing.T, yolo bool) (*workspace.Workspace, *asked) {
	t.Helper()
	u := &asked{}
	ws, err := workspace.New(workspace.Options{Cwd: t.TempDir(), Policy: permit.NewPolicy(yolo, nil, nil), Ask: u.ask})
	if err != nil {
		t.Fatal(err)
	}
	return ws, u
}

func newReadOnly(env tools.Env) *readOnly {
	return &readOnly{Env: env, name: "historian", reads: tools.NewReadTracker(), prefix: "ask-historian-1-"}
}

// TestReadOnlyRefusesChanges: an asked agent's approval to write, run or
// reach outside is refused before the user is asked — even though the
// caller runs in yolo mode and its user would allow anything — and the
// refusal names the agent.
func TestReadOnlyRefusesChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		caps tools.Caps
	}{
		{"edit", tools.Reads | tools.WritesWorkspace},
		{"write outside", tools.WritesOutside},
		{"bash", tools.RunsPrograms},
		{"read and run", tools.Reads | tools.RunsPrograms},
		{"a file that runs later", tools.WritesRunLater},
		{"an MCP tool (anything)", tools.Anything},
		{"declares nothing", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, user := callerEnv(t, true)
			d, err := newReadOnly(ws).Approve(context.Background(), tools.Approval{CallID: "c1", Tool: "x", Caps: tc.caps, Title: "do it", Hook: tools.HookAllow})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				t.Fatalf("caps %v: allowed", tc.caps)
			}
			if !strings.Contains(d.Reason, "historian agent is read-only") {
				t.Errorf("reason %q does not say the agent is read-only", d.Reason)
			}
			if len(user.reqs) != 0 {
				t.Errorf("the user was asked %d times; a refused change must not reach them", len(user.reqs))
			}
		})
	}
}

// TestReadOnlyAsksReads: a read-only action (a fetch) goes to the asking
// session's user, with an id of its own, the agent's name in the title,
// and a hook's allow dropped — the user decides, not a hook.
func TestReadOnlyAsksReads(t *testing.T) {
	for _, caps := range []tools.Caps{tools.Reads, tools.Network, tools.Reads | tools.Network} {
		ws, user := callerEnv(t, false)
		d, err := newReadOnly(ws).Approve(context.Background(), tools.Approval{CallID: "c1", Tool: "fetch_content", Caps: caps, Title: "Fetch example.org", Hook: tools.HookAllow})
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			t.Fatalf("caps %v: refused (%s)", caps, d.Reason)
		}
		if len(user.reqs) != 1 {
			t.Fatalf("caps %v: the user was asked %d times, want 1", caps, len(user.reqs))
		}
		got := user.reqs[0]
		if got.CallID != "ask-historian-1-c1" || got.Title != "historian: Fetch example.org" || got.Hook != "" {
			t.Errorf("caps %v: the user saw id %q, title %q, hook %q", caps, got.CallID, got.Title, got.Hook)
		}
	}
}

// TestReadOnlyWriteFile: a write through the view fails and the file is
// left byte-identical; reads still see the caller's files.
func TestReadOnlyWriteFile(t *testing.T) {
	ws, _ := callerEnv(t, false)
	p := filepath.Join(ws.Cwd(), "main.go")
	if err := os.WriteFile(p, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := newReadOnly(ws)
	ctx := context.Background()
	if err := ro.WriteFile(ctx, p, []byte("changed\n"), 0o644); err == nil || !strings.Contains(err.Error(), "historian agent is read-only") {
		t.Fatalf("WriteFile: %v, want a read-only error", err)
	}
	if err := ro.WriteFile(ctx, filepath.Join(ws.Cwd(), "new.go"), []byte("x"), 0o644); err == nil {
		t.Fatal("WriteFile created a file")
	}
	if b, _ := os.ReadFile(p); string(b) != "package main\n" {
		t.Fatalf("the file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws.Cwd(), "new.go")); !os.IsNotExist(err) {
		t.Fatalf("new.go exists: %v", err)
	}
	if b, err := ro.ReadFile(ctx, p); err != nil || string(b) != "package main\n" {
		t.Fatalf("ReadFile = %q, %v", b, err)
	}
}

// TestReadOnlyOwnReads: what the asked agent reads is not read for the
// caller (its read-before-write tracker is its own).
func TestReadOnlyOwnReads(t *testing.T) {
	ws, _ := callerEnv(t, false)
	ro := newReadOnly(ws)
	if ro.Reads() == ws.Reads() || ro.Reads() == nil {
		t.Fatal("the asked agent shares the caller's read tracker")
	}
}

// TestRewriterWithoutSession: /ask- lines that name no agent or ask
// nothing are answered at once, with the line that fixes them, and no
// session is built; other prompts go on to the next rewriter.
func TestRewriterWithoutSession(t *testing.T) {
	built := 0
	s := Set{New("historian", "git history", func(string, tools.Env) *engine.Session { built++; return nil })}
	ws, _ := callerEnv(t, false)
	next := func(_ context.Context, p string) engine.Rewrite { return engine.Rewrite{Prompt: "next: " + p} }
	rw := s.Rewriter(ws, next)
	for _, tc := range []struct{ prompt, want string }{
		{"/ask-poet hello", `mm: no agent named "poet" — the config's agents: /ask-historian`},
		{"/ask-historian", "mm: /ask-historian needs a question, e.g. /ask-historian why was the parser rewritten?"},
		{"/ask-historian   ", "mm: /ask-historian needs a question"},
	} {
		if got := rw(context.Background(), tc.prompt); !strings.HasPrefix(got.Answer, tc.want) {
			t.Errorf("%q: answer %q, want %q", tc.prompt, got.Answer, tc.want)
		}
	}
	if got := rw(context.Background(), "fix the bug"); got.Prompt != "next: fix the bug" || got.Answer != "" {
		t.Errorf("a plain prompt became %+v", got)
	}
	if built != 0 {
		t.Errorf("%d sessions built", built)
	}
	if Set(nil).Rewriter(ws, nil) != nil {
		t.Error("no agents: the rewriter is not left as it was")
	}
	if h := s.Help(); len(h) != 1 || !strings.Contains(h[0], "/ask-historian QUESTION — ask the historian agent (git history)") {
		t.Errorf("Help = %q", h)
	}
}

// TestAskInARealTurn: an asked agent's real turn, against the scripted
// model, whose session still offers write_file (the boundary must hold
// even when its config's tools are not off): the write is refused without
// asking the caller's yolo user, the model reads why, the file is left
// byte-identical, and the agent's last words are the tool's result.
func TestAskInARealTurn(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "read_file", ArgsRaw: `{"path":"main.go"}`}}},
		{ToolCalls: []llmtest.ToolCall{{Name: "write_file", ArgsRaw: `{"path":"main.go","content":"package evil\n"}`}}},
		{Content: "It is package main."},
	}})
	t.Cleanup(srv.Close)
	ws, user := callerEnv(t, true)
	p := filepath.Join(ws.Cwd(), "main.go")
	if err := os.WriteFile(p, []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := New("historian", "git history", func(cwd string, env tools.Env) *engine.Session {
		return engine.NewSession(engine.Options{
			Model:     llm.New(llm.Options{Provider: "llamacpp", BaseURL: srv.URL(), RetryDelays: []time.Duration{}}),
			ModelName: "fake-model",
			Tools:     tools.NewRegistry(files.New(files.Options{})...),
			Env:       env,
			Sampling:  llm.Sampling{MaxTokens: 4096},
		})
	})
	res, err := g.tool(context.Background(), ws, "what package is main.go?")
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Text != "It is package main." {
		t.Fatalf("result %+v", res)
	}
	if b, _ := os.ReadFile(p); string(b) != "package main\n" {
		t.Fatalf("the asked agent changed the file: %q", b)
	}
	if len(user.reqs) != 0 {
		t.Errorf("the caller's user was asked %d times", len(user.reqs))
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if !strings.Contains(string(reqs[2].Body), "historian agent is read-only") {
		t.Errorf("the model was not told the write was refused: %s", reqs[2].Body)
	}
}
