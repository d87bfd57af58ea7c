package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/permit"
)

// TestLineModeResume: sessions are stored in line mode too (mm -p): each
// run saves its session and says how to continue it; --continue takes the
// newest of the workspace, --resume ID a named one; the model gets the
// earlier conversation each time. An unknown id is one line and exit 2.
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
	testenv.WantIn(t, "third request", joined, "Remember the number 42", "assistant: Noted: the number is 42.", "user: Which number?", "assistant: The number was 42.", "user: And now?")

	_, stderr, code = w.line("", "-p", "--resume", "sess_0000", "hi")
	if code != 2 || !strings.Contains(stderr, "no saved session sess_0000") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Errorf("unknown id: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := w.line("", "acp", "--continue"); code != 2 || !strings.Contains(stderr, "go with -p") {
		t.Errorf("acp --continue: exit %d, %q", code, stderr)
	}
}

// TestAlwaysAllowPersistsPerWorkspace: "always allow" for a command
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

// sessionIDOf finds the session id in line mode's resume hint.
func sessionIDOf(t *testing.T, stderr string) string {
	t.Helper()
	m := regexp.MustCompile(`mm -p --resume (sess_[0-9a-f]+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no resume hint on stderr:\n%s", stderr)
	}
	return m[1]
}

// storedSessions are the session files (not the hidden lock files) under
// the state directory.
func storedSessions(t *testing.T, state string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(state, "mm", "sessions", "*", "sess_*.json"))
	return files
}

// remembered is a world whose model answers "Remember the number 42",
// then gives steps: with its own state directory, where the session of
// that first line-mode turn is saved, and its id.
func remembered(t *testing.T, steps ...llmtest.Step) (w *world, state, id string) {
	t.Helper()
	state = t.TempDir()
	w = newWorldOn(t, llmtest.NewServer(llmtest.Scenario{Steps: append([]llmtest.Step{{Content: "Noted: the number is 42."}}, steps...)}), "XDG_STATE_HOME="+state)
	_, stderr := w.lineOK("", "-p", "Remember the number 42")
	return w, state, sessionIDOf(t, stderr)
}

// stderrLine fails unless s is exactly one line holding want.
func stderrLine(t *testing.T, what, s, want string) {
	t.Helper()
	s = strings.TrimSpace(s)
	if !strings.Contains(s, want) || strings.Contains(s, "\n") {
		t.Errorf("%s: want one line with %q, got:\n%s", what, want, s)
	}
}

// TestTwoWritersOneSession: two `mm -p --resume ID` at once. The second
// finds the first one's turn running and says so in one line (exit 1)
// without touching the session; the first one's turn is kept, and the
// next run continues from it.
func TestTwoWritersOneSession(t *testing.T) {
	t.Parallel()
	stall := 1
	w, _, id := remembered(t, llmtest.Step{Content: "The number was 42, said slowly.", StallAfter: &stall}, llmtest.Step{Content: "Still 42."})
	srv, dir, env := w.srv, w.dir, w.env

	first := exec.Command(mmBin(t), "-p", "--resume", id, "Which number?")
	first.Dir, first.Env = dir, env
	var out1, err1 bytes.Buffer
	first.Stdout, first.Stderr = &out1, &err1
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Wait() }()
	select {
	case <-srv.StepStalled(1):
	case err := <-done:
		t.Fatalf("the first writer ended before its turn was under way: %v\n%s", err, err1.String())
	case <-time.After(time.Minute):
		t.Fatal("the first writer's turn never began")
	}
	stdout, stderr, code := runInProcess(t, dir, env, "", "-p", "--resume", id, "Forget it")
	if code != 1 || stdout != "" {
		t.Errorf("second writer: exit %d, stdout %q", code, stdout)
	}
	stderrLine(t, "second writer", stderr, "is in use by another mm")
	srv.Release(1)
	if err := <-done; err != nil {
		t.Fatalf("first writer: %v\n%s", err, err1.String())
	}
	if !strings.Contains(out1.String(), "The number was 42") {
		t.Errorf("first writer's answer: %q", out1.String())
	}

	// Nothing lost: the next run sends both earlier turns, and not the
	// refused prompt.
	if _, stderr, code := runInProcess(t, dir, env, "", "-p", "--resume", id, "And now?"); code != 0 {
		t.Fatalf("third run: exit %d: %s", code, stderr)
	}
	reqs := srv.Requests()
	joined := transcript(reqs[len(reqs)-1])
	testenv.WantIn(t, "the last request", joined, "Remember the number 42", "user: Which number?", "assistant: The number was 42, said slowly.", "user: And now?")
	if strings.Contains(joined, "Forget it") {
		t.Errorf("the refused prompt entered the session:\n%s", joined)
	}
}

// TestDiskFullMidSave: the disk fills while the session is written
// (RLIMIT_FSIZE makes the write fail with EFBIG part-way, as ENOSPC
// would). The turn still answers, the failure is one line, the session
// file keeps its previous content byte for byte and loads as before, no
// temporary file is left, and the next run continues from the last saved
// turn.
func TestDiskFullMidSave(t *testing.T) {
	t.Parallel()
	prlimit := testenv.NeedTool(t, "prlimit")
	w, state, id := remembered(t, llmtest.Step{Content: "The number was 42. " + strings.Repeat("A long answer that makes the session file grow. ", 200)}, llmtest.Step{Content: "Still 42."})
	dir, env := w.dir, w.env
	files := storedSessions(t, state)
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}
	before, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(filepath.Join(state, "mm"), nil)
	loaded := func() string {
		rec, err := st.Load(id)
		if err != nil {
			t.Fatalf("the session cannot be loaded: %v", err)
		}
		b, _ := json.Marshal([]any{rec.History, rec.Replay})
		return string(b)
	}
	was := loaded()

	// Files may grow to the old session's size and a little more: the
	// new session file (10 KiB bigger) cannot be written whole.
	limit := len(before) + 2048
	cmd := exec.Command(prlimit, "--fsize="+strconv.Itoa(limit), mmBin(t), "-p", "--resume", id, "Which number?")
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if cmd.ProcessState.ExitCode() != 0 || !strings.Contains(out.String(), "The number was 42.") {
		t.Fatalf("mm did not answer: exit %d, stdout %q, stderr:\n%s", cmd.ProcessState.ExitCode(), out.String(), errb.String())
	}
	var notSaved []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.Contains(l, "session not saved") {
			notSaved = append(notSaved, l)
		}
	}
	if len(notSaved) != 1 || !strings.Contains(notSaved[0], "file too large") {
		t.Errorf("want one 'session not saved' line naming the cause, got:\n%s", errb.String())
	}
	if strings.Contains(errb.String(), "goroutine ") || strings.Contains(errb.String(), "panic") {
		t.Errorf("a stack trace:\n%s", errb.String())
	}
	after, err := os.ReadFile(files[0])
	if err != nil || !bytes.Equal(before, after) {
		t.Errorf("the session file changed although its save failed (err %v)", err)
	}
	if loaded() != was {
		t.Errorf("the session loads differently after a failed save")
	}
	ents, _ := os.ReadDir(filepath.Dir(files[0]))
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if _, stderr, code := runInProcess(t, dir, env, "", "-p", "--resume", id, "And now?"); code != 0 {
		t.Fatalf("after the full disk: exit %d: %s", code, stderr)
	}
}

// TestNoServerNoSession: a first contact that reached no server stores
// nothing and advertises nothing; neither does a run whose state
// directory cannot be written.
func TestNoServerNoSession(t *testing.T) {
	t.Parallel()
	dir, state := t.TempDir(), t.TempDir()
	env := mmEnv(t, nil, "MM_BASE_URL=http://127.0.0.1:1/v1", "XDG_STATE_HOME="+state)
	_, stderr, code := runInProcess(t, dir, env, "", "-p", "hello")
	if code == 0 {
		t.Errorf("no server, exit 0")
	}
	if strings.Contains(stderr, "--resume") {
		t.Errorf("a session that reached no server is advertised:\n%s", stderr)
	}
	if files := storedSessions(t, state); len(files) != 0 {
		t.Errorf("a session that reached no server was stored: %v", files)
	}

	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "Hello."}}})
	t.Cleanup(srv.Close)
	blocker := filepath.Join(t.TempDir(), "not-a-dir")
	testenv.WriteFile(t, blocker, "")
	_, stderr, code = runInProcess(t, dir, mmEnv(t, srv, "XDG_STATE_HOME="+blocker), "", "-p", "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "--resume") {
		t.Errorf("a session that could not be saved is advertised:\n%s", stderr)
	}
}

// TestSessionBelongsToItsWorkspace: a session resumed from another
// workspace is refused in one line naming its workspace (exit 2); it
// stays in its own workspace, where --continue still finds it.
func TestSessionBelongsToItsWorkspace(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "line_resume")
	a, b, state := t.TempDir(), t.TempDir(), t.TempDir()
	env := mmEnv(t, srv, "XDG_STATE_HOME="+state)
	_, stderr, code := runInProcess(t, a, env, "", "-p", "Remember the number 42")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	id := sessionIDOf(t, stderr)
	stdout, stderr, code := runInProcess(t, b, env, "", "-p", "--resume", id, "Which number?")
	if code != 2 || stdout != "" {
		t.Errorf("resumed in another workspace: exit %d, stdout %q", code, stdout)
	}
	stderrLine(t, "another workspace", stderr, "belongs to the workspace "+a)
	stdout, stderr, code = runInProcess(t, a, env, "", "-p", "--continue", "Which number?")
	if code != 0 || !strings.Contains(stdout, "The number was 42.") || !strings.Contains(stderr, id) {
		t.Errorf("--continue in its workspace: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

// TestLineResumeKeepsMode: a session the user put in plan mode in the
// editor stays in plan mode when continued with mm -p --resume: the
// model is told, and its write is refused even with --yes.
func TestLineResumeKeepsMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "resume_plan", "XDG_STATE_HOME="+t.TempDir())
	p := w.session()
	if _, err := p.Conn.SetSessionMode(w.ctx, sdk.SetSessionModeRequest{SessionId: p.id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	p.CloseInput()
	p.WaitExit()

	w.lineOK("", "--yes", "-p", "--resume", string(p.id), "create plan.txt")
	if _, err := os.Stat(filepath.Join(w.dir, "plan.txt")); !os.IsNotExist(err) {
		t.Errorf("plan.txt was written in plan mode (stat: %v)", err)
	}
	reqs := w.srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	last := reqs[0].Last()
	if !strings.Contains(last.Content, permit.PlanNote) {
		t.Errorf("the model was not told it is in plan mode: %q", last.Content)
	}
}
