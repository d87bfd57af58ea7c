package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// term is mm running on a real pseudo-terminal, as a user starts it.
type term struct {
	t    *testing.T
	f    *os.File
	out  *acptest.Stream // what mm showed on the terminal
	seen int             // offset up to which waitFor has matched
	done chan struct{}   // closed when mm has exited, with err set
	err  error
	pid  int
}

func startTerm(t *testing.T, dir string, env []string, args ...string) *term {
	t.Helper()
	cmd := exec.Command(mmBin(t), args...)
	cmd.Dir, cmd.Env = dir, append(env, "TERM=xterm")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, f: f, out: &acptest.Stream{}, done: make(chan struct{}), pid: cmd.Process.Pid}
	go io.Copy(tm.out, f)
	go func() { tm.err = cmd.Wait(); close(tm.done) }()
	t.Cleanup(func() {
		select {
		case <-tm.done:
		default:
			syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-tm.done
		}
		f.Close()
		if t.Failed() {
			t.Logf("terminal:\n%s", tm.screen())
		}
	})
	return tm
}

func (tm *term) screen() string { return tm.out.String() }

// waitFor waits until s appears after what was matched before.
func (tm *term) waitFor(s string) {
	tm.t.Helper()
	tm.seen = tm.out.WaitFrom(tm.t, tm.seen, s)
}

// exit leaves with /exit and checks mm exits 0.
func (tm *term) exit() {
	tm.t.Helper()
	tm.send("/exit\r")
	select {
	case <-tm.done:
		if tm.err != nil {
			tm.t.Errorf("mm exited with %v, want 0", tm.err)
		}
	case <-time.After(10 * time.Second):
		tm.t.Fatal("mm did not exit after /exit")
	}
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.f.WriteString(s); err != nil {
		tm.t.Fatal(err)
	}
}

// TestREPLOnATerminal: `mm` with no argument on a terminal opens the
// prompt; a turn asks permission inline and is answered, Ctrl-C cancels a
// streaming answer and the prompt comes back, /exit leaves with 0.
func TestREPLOnATerminal(t *testing.T) {
	w := newWorld(t, "repl", "XDG_STATE_HOME="+t.TempDir())
	srv, dir := w.srv, w.dir
	tm := w.term()

	tm.waitFor("mm> ")
	tm.send("write hi to out.txt\r")
	tm.waitFor("thinking…") // the thought, streamed dimmed
	tm.waitFor("\x1b[2mbash.")
	tm.waitFor("? [y]es / [a]lways / [n]o / ne[v]er: ")
	tm.send("y\r")
	tm.waitFor("Wrote out.txt.")
	tm.waitFor("end_turn")
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "hi\n" {
		t.Errorf("out.txt = %q, %v: the allowed command did not run", b, err)
	}
	tm.waitFor("mm> ")

	tm.send("tell me more\r")
	select { // the answer is streaming, and stuck
	case <-srv.StepStalled(2):
	case <-time.After(20 * time.Second):
		t.Fatal("the third answer never started")
	}
	tm.waitFor("Here ")
	tm.send("\x03") // Ctrl-C
	tm.waitFor("cancelling")
	tm.waitFor("mm> ")

	tm.send("/compact\r")
	tm.waitFor("compacted: ")
	tm.waitFor("mm> ")
	tm.send("/mode plan\r")
	tm.waitFor("mode: plan")
	tm.send("/mode nope\r")
	tm.waitFor(`no mode "nope"`)
	tm.exit()
	if srv.Remaining() != 0 {
		t.Errorf("%d scenario steps left", srv.Remaining())
	}
}

// TestREPLSecondCtrlCShutsDownCleanly: a second Ctrl-C while a turn is
// still running — here stuck on the permission question — leaves through
// the normal shutdown, bounded in time: the turn ends and is saved, and
// mm exits 130 — through every cleanup, not os.Exit, so the session is
// saved. SIGINT is sent to mm as the terminal sends it when no line is
// being edited.
func TestREPLSecondCtrlCShutsDownCleanly(t *testing.T) {
	srv := scenario(t, "long_bash")
	dir, state := t.TempDir(), t.TempDir()
	tm := startTerm(t, dir, mmEnv(t, srv, "XDG_STATE_HOME="+state))
	tm.waitFor("mm> ")
	tm.send("run the long command\r")
	tm.waitFor("? [y]es / [a]lways / [n]o / ne[v]er: ")
	syscall.Kill(tm.pid, syscall.SIGINT)
	tm.waitFor("cancelling")
	syscall.Kill(tm.pid, syscall.SIGINT)
	select {
	case <-tm.done:
	case <-time.After(15 * time.Second):
		t.Fatal("mm did not exit after a second Ctrl-C")
	}
	var ee *exec.ExitError
	if !errors.As(tm.err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("mm exited with %v, want status 130", tm.err)
	}
	if strings.Contains(tm.screen(), "took too long") {
		t.Errorf("the shutdown was not clean:\n%s", tm.screen())
	}
	saved := false
	filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			b, _ := os.ReadFile(p)
			saved = saved || strings.Contains(string(b), "run the long command")
		}
		return nil
	})
	if !saved {
		t.Error("the interrupted turn was not saved")
	}
	if _, err := os.Stat(filepath.Join(dir, "child.pid")); err == nil {
		t.Error("the command ran without being allowed")
	}
}

// TestREPLSteering: a line typed while a turn runs steers it — mm says
// at once that it is queued, the model reads it before its next call
// (here: after the answer it was streaming, so the turn goes on and ends
// once), and the prompt comes back after.
func TestREPLSteering(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{Content: "Working on it with a, step by step.", StallAfter: ptrTo(2)},
		{Content: "Switched to b."},
	}})
	t.Cleanup(srv.Close)
	tm := startTerm(t, t.TempDir(), mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
	tm.waitFor("mm> ")
	tm.send("use a\r")
	select {
	case <-srv.StepStalled(0):
	case <-time.After(20 * time.Second):
		t.Fatal("the answer never started")
	}
	tm.send("use b instead\r")
	tm.waitFor("queued for the model's next step")
	srv.Release(0)
	tm.waitFor("the model now reads: use b instead")
	tm.waitFor("Switched to b.")
	tm.waitFor("mm> ")
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	m := reqs[1].Messages
	if n := len(m); m[n-2].Role != "assistant" || !strings.HasPrefix(m[n-2].Content, "Working on it") || m[n-1].Role != "user" || m[n-1].Content != "use b instead" {
		t.Errorf("the second request ends with %+v, want the first answer, then the line typed", m[len(m)-2:])
	}
	tm.exit()
}

func ptrTo[T any](v T) *T { return &v }

// TestREPLQuestionBlockShownOnce: at a permission question with a detail
// block, typing and erasing an answer leaves the block on the screen
// once. The line editor redraws its prompt at every keystroke: were the
// block part of that prompt, `no` and two backspaces would leave eight
// copies of the block's first line.
func TestREPLQuestionBlockShownOnce(t *testing.T) {
	w := newWorld(t, "tty_question", "XDG_STATE_HOME="+t.TempDir())
	dir := w.dir
	tm := w.term()
	tm.waitFor("mm> ")
	tm.send("write the file\r")
	tm.waitFor("? [y]es / [a]lways / [n]o / ne[v]er: ")
	tm.send("no\x7f\x7fy\r") // the line editor redraws after each key
	tm.waitFor("Done.")
	tm.waitFor("mm> ")
	const first = `"Always allow" allows from now on, in this workspace:`
	if n := strings.Count(tm.screen(), first); n != 1 {
		t.Errorf("the block's first line is on the screen %d times, want once", n)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "answered.txt")); err != nil || string(b) != "allowed\n" {
		t.Errorf("answered.txt = %q, %v: the answer y was not followed", b, err)
	}
	tm.send("/exit\r")
	<-tm.done
}

// ttyRun is `mm -p` with a pseudo-terminal as its controlling terminal and
// stderr, as when a user types the command.
type ttyRun struct {
	cmd    *exec.Cmd
	master *os.File
	screen *acptest.Stream // what mm showed on the terminal
	done   chan struct{}   // closed once mm exited
	stdout bytes.Buffer
}

func startTTY(t *testing.T, dir string, env []string, args ...string) *ttyRun {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		testenv.Unavailable(t, "no pseudo-terminal here: %v", err)
	}
	r := &ttyRun{master: master, screen: &acptest.Stream{}, done: make(chan struct{})}
	r.cmd = exec.Command(mmBin(t), args...)
	r.cmd.Dir, r.cmd.Env = dir, env
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, slave
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	go io.Copy(r.screen, master)
	go func() {
		r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			r.cmd.Process.Kill()
			t.Errorf("mm did not exit; terminal:\n%s", r.text())
			<-r.done
		}
		master.Close()
	})
	return r
}

func (r *ttyRun) text() string { return r.screen.String() }

// waitFor waits until the terminal shows s.
func (r *ttyRun) waitFor(t *testing.T, s string) {
	t.Helper()
	r.screen.WaitFor(t, s)
}

func (r *ttyRun) wait(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("mm hung; terminal:\n%s", r.text())
	}
}

// TestLineTTYQuestionWithoutColours: NO_COLOR=1 and TERM=dumb turn
// colours off, not the permission question: it is asked on the terminal
// and the answer is followed.
func TestLineTTYQuestionWithoutColours(t *testing.T) {
	w := newWorld(t, "tty_question", "NO_COLOR=1", "TERM=dumb")
	dir := w.dir
	r := startTTY(t, dir, w.env, "-p", "write the file")
	r.waitFor(t, "[y]es / [a]lways / [n]o / ne[v]er: ")
	r.master.Write([]byte("y\n"))
	r.wait(t)
	if got, err := os.ReadFile(filepath.Join(dir, "answered.txt")); err != nil || string(got) != "allowed\n" {
		t.Errorf("the allowed command did not run (%v); terminal:\n%s", err, r.text())
	}
	if strings.Contains(r.text(), "\x1b[") {
		t.Errorf("colours despite NO_COLOR:\n%q", r.text())
	}
	if r.stdout.String() != "Done.\n" {
		t.Errorf("stdout = %q", r.stdout.String())
	}
}

// TestLineTTYCtrlCAtTheQuestion: Ctrl-C while the question waits ends the
// turn — the command never runs, no further model request is made, and mm
// exits.
func TestLineTTYCtrlCAtTheQuestion(t *testing.T) {
	w := newWorld(t, "tty_question")
	srv, dir := w.srv, w.dir
	r := startTTY(t, dir, w.env, "-p", "write the file")
	r.waitFor(t, "ne[v]er: ")
	r.master.Write([]byte{3}) // ^C: the terminal sends SIGINT to mm
	r.wait(t)
	if _, err := os.Stat(filepath.Join(dir, "answered.txt")); err == nil {
		t.Errorf("the command ran after Ctrl-C")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1 (none after Ctrl-C)", n)
	}
	if code := r.cmd.ProcessState.ExitCode(); code == 0 {
		t.Errorf("exit code 0 after Ctrl-C; terminal:\n%s", r.text())
	}
}
