package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// TestACPFork: session/fork (unstable, advertised) copies a session at
// its current end under a new id: the fork's answer and its next request
// carry the original's mode and chosen model, and its request the
// original's conversation; the original goes on without the fork's turn
// and the fork without the original's later one; session/list shows
// both, and a restarted agent loads the fork with its own turns only.
// Every message validates against the 2026-11 schema.
func TestACPFork(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{Models: []string{"fake-model", "big-model"}, Steps: []llmtest.Step{
		{Content: "Looking at the parser."}, {Content: "The lexer, in the fork."}, {Content: "Still the parser."}}})
	w := newWorldOn(t, srv, "XDG_STATE_HOME="+t.TempDir())
	dir, ctx := w.dir, w.ctx
	p := w.serve(acptest.Options{})
	if init := p.Initialize(ctx); init.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Fatalf("session/fork not advertised: %+v", init.AgentCapabilities.SessionCapabilities)
	}
	a := p.open()
	if _, err := p.Conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: a, ModeId: "accept-edits"}); err != nil {
		t.Fatal(err)
	}
	// The model list comes after session/new's answer; then the
	// original's model is chosen, not the server's default.
	p.WaitUpdates("the model picker", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool {
			return u.ConfigOptionUpdate != nil && selectOf(u.ConfigOptionUpdate.ConfigOptions, "model") != nil
		})
	})
	if _, err := p.Conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: a, ConfigId: "model", Value: "big-model"}}); err != nil {
		t.Fatal(err)
	}
	p.turn("Fix the parser")
	f, err := p.Conn.UnstableForkSession(ctx, sdk.UnstableForkSessionRequest{SessionId: a, Cwd: dir})
	if err != nil || f.SessionId == "" || f.SessionId == a {
		t.Fatalf("fork: %+v %v", f, err)
	}
	if f.Modes == nil || f.Modes.CurrentModeId != "accept-edits" {
		t.Errorf("the fork's mode = %+v", f.Modes)
	}
	var opts []sdk.SessionConfigOption
	raw, _ := json.Marshal(f.ConfigOptions)
	json.Unmarshal(raw, &opts)
	if m := selectOf(opts, "model"); m == nil || m.CurrentValue != "big-model" {
		t.Errorf("the fork's model option = %+v, want the original's big-model", m)
	}
	if _, err := p.Prompt(ctx, f.SessionId, "and the lexer?"); err != nil {
		t.Fatal(err)
	}
	p.turn("and the tests?")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if fork := transcript(reqs[1]); !strings.Contains(fork, "Fix the parser") || !strings.Contains(fork, "Looking at the parser.") || reqs[1].Model != "big-model" {
		t.Errorf("the fork's request (model %q) lacks the original conversation or model:\n%s", reqs[1].Model, fork)
	}
	if orig := transcript(reqs[2]); !strings.Contains(orig, "Looking at the parser.") || strings.Contains(orig, "and the lexer?") || strings.Contains(orig, "in the fork") {
		t.Errorf("the original's next request is not the original's alone:\n%s", orig)
	}
	l, err := p.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, s := range l.Sessions {
		titles = append(titles, *s.Title)
	}
	slices.Sort(titles)
	if strings.Join(titles, "|") != "Fix the parser|Fix the parser (fork)" {
		t.Errorf("session/list titles %q", titles)
	}
	p.Stop()

	// A restarted agent loads the fork: its own turns, not the original's
	// later one, and the original's model still chosen.
	q := w.serve(acptest.Options{})
	ld := q.Load(ctx, sdk.LoadSessionRequest{SessionId: f.SessionId, Cwd: dir})
	if got := acptest.UserText(q.Updates()); !strings.Contains(got, "Fix the parser") || !strings.Contains(got, "and the lexer?") || strings.Contains(got, "and the tests?") {
		t.Errorf("the fork loaded with the user's messages %q", got)
	}
	if m := selectOf(ld.ConfigOptions, "model"); m == nil || m.CurrentValue != "big-model" {
		t.Errorf("the loaded fork's model option = %+v, want big-model", m)
	}
}

// TestLineFork: mm -p --fork ID continues a copy of a saved session —
// the model gets the original's conversation — under a new id; the
// original is left as it was (--resume of it does not see the fork's
// turn).
func TestLineFork(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "line_resume", "XDG_STATE_HOME="+t.TempDir())
	_, stderr, code := w.line("", "-p", "Remember the number 42")
	m := regexp.MustCompile(`session (sess_[0-9a-f]+)`).FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	orig := m[1]
	_, stderr, code = w.line("", "-p", "--fork", orig, "Which number?")
	f := regexp.MustCompile(`session (sess_[0-9a-f]+)`).FindStringSubmatch(stderr)
	if code != 0 || f == nil || f[1] == orig {
		t.Fatalf("--fork: exit %d: %s", code, stderr)
	}
	if _, _, code := w.line("", "-p", "--resume", orig, "And now?"); code != 0 {
		t.Fatalf("--resume of the original: exit %d", code)
	}
	reqs := w.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	if fork := transcript(reqs[1]); !strings.Contains(fork, "Remember the number 42") {
		t.Errorf("the fork lacks the original conversation:\n%s", fork)
	}
	if orig := transcript(reqs[2]); strings.Contains(orig, "Which number?") {
		t.Errorf("the original saw the fork's turn:\n%s", orig)
	}
}
