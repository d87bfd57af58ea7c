package main

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPFork: session/fork (unstable, advertised) copies a session at
// its current end under a new id: the fork's next request carries the
// original's conversation, and its mode; the original goes on without
// the fork's turn; session/list shows both. Every message validates
// against the 2026-11 schema.
func TestACPFork(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "titles")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
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
	if _, err := p.prompt(ctx, f.SessionId, "and the lexer?"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	var said []string
	for _, m := range reqs[len(reqs)-1].Messages {
		said = append(said, m.Content)
	}
	if joined := strings.Join(said, "\n"); !strings.Contains(joined, "Fix the parser") || !strings.Contains(joined, "Looking at the parser.") {
		t.Errorf("the fork's request lacks the original conversation:\n%s", joined)
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
