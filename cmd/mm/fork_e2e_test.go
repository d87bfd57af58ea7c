package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
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
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir())
	p := startAgent(t, dir, env)
	ctx := testenv.Context(t)
	init, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil || init.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Fatalf("session/fork not advertised: %+v %v", init.AgentCapabilities.SessionCapabilities, err)
	}
	ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	a := ns.SessionId
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: a, ModeId: "accept-edits"}); err != nil {
		t.Fatal(err)
	}
	// The model list comes after session/new's answer; then the
	// original's model is chosen, not the server's default.
	p.client.waitUpdates(t, "the model picker", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool {
			return u.ConfigOptionUpdate != nil && selectOf(u.ConfigOptionUpdate.ConfigOptions, "model") != nil
		})
	})
	if _, err := p.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: a, ConfigId: "model", Value: "big-model"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.prompt(ctx, a, "Fix the parser"); err != nil {
		t.Fatal(err)
	}
	f, err := p.conn.UnstableForkSession(ctx, sdk.UnstableForkSessionRequest{SessionId: a, Cwd: dir})
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
	if _, err := p.prompt(ctx, f.SessionId, "and the lexer?"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.prompt(ctx, a, "and the tests?"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	said := func(i int) string {
		var out []string
		for _, m := range reqs[i].Messages {
			out = append(out, m.Content)
		}
		return strings.Join(out, "\n")
	}
	if fork := said(1); !strings.Contains(fork, "Fix the parser") || !strings.Contains(fork, "Looking at the parser.") || reqs[1].Model != "big-model" {
		t.Errorf("the fork's request (model %q) lacks the original conversation or model:\n%s", reqs[1].Model, fork)
	}
	if orig := said(2); !strings.Contains(orig, "Looking at the parser.") || strings.Contains(orig, "and the lexer?") || strings.Contains(orig, "in the fork") {
		t.Errorf("the original's next request is not the original's alone:\n%s", orig)
	}
	l, err := p.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
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
	checkSchema(t, p.sent.String(), p.stdout.String())
	p.stop(t)

	// A restarted agent loads the fork: its own turns, not the original's
	// later one, and the original's model still chosen.
	q := startAgent(t, dir, env)
	if _, err := q.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	ld, err := q.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: f.SessionId, Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/load of the fork: %v", err)
	}
	us, _ := q.client.snapshot()
	var user []string
	for _, u := range us {
		if u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil {
			user = append(user, u.UserMessageChunk.Content.Text.Text)
		}
	}
	if got := strings.Join(user, "|"); !strings.Contains(got, "Fix the parser") || !strings.Contains(got, "and the lexer?") || strings.Contains(got, "and the tests?") {
		t.Errorf("the fork loaded with the user's messages %q", user)
	}
	if m := selectOf(ld.ConfigOptions, "model"); m == nil || m.CurrentValue != "big-model" {
		t.Errorf("the loaded fork's model option = %+v, want big-model", m)
	}
	checkSchema(t, q.sent.String(), q.stdout.String())
}

// TestLineFork: mm -p --fork ID continues a copy of a saved session —
// the model gets the original's conversation — under a new id; the
// original is left as it was (--resume of it does not see the fork's
// turn).
func TestLineFork(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "line_resume")
	dir := t.TempDir()
	env := mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir())
	_, stderr, code := runInProcess(t, dir, env, "", "-p", "Remember the number 42")
	m := regexp.MustCompile(`session (sess_[0-9a-f]+)`).FindStringSubmatch(stderr)
	if code != 0 || m == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	orig := m[1]
	_, stderr, code = runInProcess(t, dir, env, "", "-p", "--fork", orig, "Which number?")
	f := regexp.MustCompile(`session (sess_[0-9a-f]+)`).FindStringSubmatch(stderr)
	if code != 0 || f == nil || f[1] == orig {
		t.Fatalf("--fork: exit %d: %s", code, stderr)
	}
	if _, _, code := runInProcess(t, dir, env, "", "-p", "--resume", orig, "And now?"); code != 0 {
		t.Fatalf("--resume of the original: exit %d", code)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	join := func(r int) string {
		var said []string
		for _, msg := range reqs[r].Messages {
			said = append(said, msg.Role+": "+msg.Content)
		}
		return strings.Join(said, "\n")
	}
	if !strings.Contains(join(1), "Remember the number 42") {
		t.Errorf("the fork lacks the original conversation:\n%s", join(1))
	}
	if strings.Contains(join(2), "Which number?") {
		t.Errorf("the original saw the fork's turn:\n%s", join(2))
	}
}
