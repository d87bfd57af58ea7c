package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestLineModeResume is C2/E29 in line mode: each run saves its session
// and says how to continue it; --continue takes the newest of the
// workspace, --resume ID a named one; the model gets the earlier
// conversation each time. An unknown id is one line and exit 2.
func TestLineModeResume(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "line_resume")
	dir := t.TempDir()
	env := mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir())

	_, stderr, code := runInProcess(t, dir, env, "", "-p", "Remember the number 42")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := regexp.MustCompile(`session (sess_[0-9a-f]+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no session id on stderr:\n%s", stderr)
	}
	id := m[1]

	stdout, stderr, code := runInProcess(t, dir, env, "", "-p", "--continue", "Which number?")
	if code != 0 || !strings.Contains(stdout, "The number was 42.") {
		t.Fatalf("--continue: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, id) {
		t.Errorf("--continue did not continue %s:\n%s", id, stderr)
	}
	if _, _, code := runInProcess(t, dir, env, "", "--resume", id, "-p", "And now?"); code != 0 {
		t.Fatalf("--resume %s: exit %d", id, code)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	var said []string
	for _, msg := range reqs[2].Messages {
		said = append(said, msg.Role+": "+msg.Content)
	}
	joined := strings.Join(said, "\n")
	for _, want := range []string{"Remember the number 42", "assistant: Noted: the number is 42.", "user: Which number?", "assistant: The number was 42.", "user: And now?"} {
		if !strings.Contains(joined, want) {
			t.Errorf("third request lacks %q:\n%s", want, joined)
		}
	}

	_, stderr, code = runInProcess(t, dir, env, "", "-p", "--resume", "sess_0000", "hi")
	if code != 2 || !strings.Contains(stderr, "no saved session sess_0000") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("unknown id: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := runInProcess(t, dir, env, "", "acp", "--continue"); code != 2 || !strings.Contains(stderr, "go with -p") {
		t.Errorf("acp --continue: exit %d, %q", code, stderr)
	}
}

// TestAlwaysAllowPersistsPerWorkspace is A4: "always allow" for a command
// prefix is remembered in mm's state directory; a new session of a new mm
// in the same workspace runs the same prefix without asking; nothing is
// written inside the repository.
func TestAlwaysAllowPersistsPerWorkspace(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "always_allow")
	dir := t.TempDir()
	state := t.TempDir()
	env := mmEnv(t, srv, "XDG_STATE_HOME="+state)
	ctx := testenv.Context(t)

	p := startAgent(t, dir, env)
	p.client.choose = sdk.PermissionOptionKindAllowAlways
	id := p.session(t, ctx, dir)
	if _, err := p.prompt(ctx, id, "run echo one"); err != nil {
		t.Fatal(err)
	}
	if _, perms := p.client.snapshot(); len(perms) != 1 {
		t.Fatalf("first session: %d permission requests, want 1", len(perms))
	}
	p.stop(t)

	p2 := startAgent(t, dir, env)
	p2.client.choose = "" // a question would be answered "cancelled"
	id2 := p2.session(t, ctx, dir)
	if _, err := p2.prompt(ctx, id2, "run echo two"); err != nil {
		t.Fatal(err)
	}
	if _, perms := p2.client.snapshot(); len(perms) != 0 {
		t.Errorf("second session asked %d times after always allow", len(perms))
	}
	reqs := srv.Requests()
	if res := reqs[3].Messages[len(reqs[3].Messages)-1]; res.Role != "tool" || !strings.Contains(res.Content, "two") {
		t.Errorf("echo two did not run: %+v", res)
	}
	if files, _ := filepath.Glob(filepath.Join(state, "mm", "permissions", "*.json")); len(files) != 1 {
		t.Errorf("permission files in the state dir: %v", files)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("mm wrote %s inside the workspace", e.Name())
	}
}
