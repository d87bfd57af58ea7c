package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestLineModeResume is C2/E29 in line mode: each run saves its session
// and says how to continue it; --continue takes the newest of the
// workspace, --resume ID a named one; the model gets the earlier
// conversation each time. An unknown id is one line and exit 2.
func TestLineModeResume(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "line_resume", "XDG_STATE_HOME="+t.TempDir())
	_, stderr := w.lineOK("", "-p", "Remember the number 42")
	id := sessionIDOf(t, stderr)

	stdout, stderr, code := w.line("", "-p", "--continue", "Which number?")
	if code != 0 || !strings.Contains(stdout, "The number was 42.") {
		t.Fatalf("--continue: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, id) {
		t.Errorf("--continue did not continue %s:\n%s", id, stderr)
	}
	if _, _, code := w.line("", "--resume", id, "-p", "And now?"); code != 0 {
		t.Fatalf("--resume %s: exit %d", id, code)
	}
	reqs := w.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	joined := transcript(reqs[2])
	wantIn(t, "third request", joined, "Remember the number 42", "assistant: Noted: the number is 42.", "user: Which number?", "assistant: The number was 42.", "user: And now?")

	_, stderr, code = w.line("", "-p", "--resume", "sess_0000", "hi")
	if code != 2 || !strings.Contains(stderr, "no saved session sess_0000") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("unknown id: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := w.line("", "acp", "--continue"); code != 2 || !strings.Contains(stderr, "go with -p") {
		t.Errorf("acp --continue: exit %d, %q", code, stderr)
	}
}

// TestAlwaysAllowPersistsPerWorkspace is A4: "always allow" for a command
// prefix is remembered in mm's state directory; a new session of a new mm
// in the same workspace runs the same prefix without asking; nothing is
// written inside the repository.
func TestAlwaysAllowPersistsPerWorkspace(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	w := newWorld(t, "always_allow", "XDG_STATE_HOME="+state)
	p := w.session()
	p.Choose(sdk.PermissionOptionKindAllowAlways)
	p.turn("run echo one")
	p.asked(1)
	p.Stop()

	p2 := w.session()
	p2.Choose("") // a question would be answered "cancelled"
	p2.turn("run echo two")
	if perms := p2.Permissions(); len(perms) != 0 {
		t.Errorf("second session asked %d times after always allow", len(perms))
	}
	reqs := w.srv.Requests()
	if res := reqs[3].Last(); res.Role != "tool" || !strings.Contains(res.Content, "two") {
		t.Errorf("echo two did not run: %+v", res)
	}
	if files, _ := filepath.Glob(filepath.Join(state, "mm", "permissions", "*.json")); len(files) != 1 {
		t.Errorf("permission files in the state dir: %v", files)
	}
	ents, _ := os.ReadDir(w.dir)
	for _, e := range ents {
		t.Errorf("mm wrote %s inside the workspace", e.Name())
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
