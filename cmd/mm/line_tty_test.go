package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/internal/testenv"
)

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

// TestLineTTYQuestionWithoutColours (issue 9, defect 8): NO_COLOR=1 and
// TERM=dumb turn colours off, not the permission question: it is asked on
// the terminal and the answer is followed.
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

// TestLineTTYCtrlCAtTheQuestion (issue 9, defect 8): Ctrl-C while the
// question waits ends the turn — the command never runs, no further model
// request is made, and mm exits.
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
