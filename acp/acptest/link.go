package acptest

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"testing"
	"time"
)

// ServeFunc is an agent served in the test's own process, as a process's
// main would run it: it speaks ACP on stdin and stdout until stdin ends
// or ctx is done, writes its diagnostics to stderr, and returns how it
// ended — nil, or what its exit status would say.
type ServeFunc func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error

// link is the editor's end of a running agent, in process or a process.
type link struct {
	t      testing.TB
	stdin  io.WriteCloser // to the agent; closing it is the editor leaving
	stdout io.Reader      // from the agent, once Received has it

	// Received is every byte the agent wrote on stdout, Sent every
	// byte written to it, Stderr what it wrote on stderr.
	Received, Sent, Stderr *Stream
	// Cmd is the agent's process; nil when it is served in process.
	Cmd *exec.Cmd

	ended chan struct{} // closed once the agent ended and stdout was read
	err   error         // how it ended, once ended is closed
	kill  func()        // ends the agent now
}

func newLink(t testing.TB) *link {
	return &link{t: t, Received: &Stream{}, Sent: &Stream{}, Stderr: &Stream{}, ended: make(chan struct{})}
}

// serveLink runs serve in this process over pipes. What a process's exit
// does to its pipes, the end of serve does too: the editor reads EOF and
// its writes fail. A panic is how the agent ended, as it would end a
// process.
func serveLink(t testing.TB, serve ServeFunc) *link {
	l := newLink(t)
	inR, inW := io.Pipe()   // editor → agent
	outR, outW := io.Pipe() // agent → editor
	l.stdin, l.stdout = inW, outR
	ctx, cancel := context.WithCancel(context.Background())
	l.kill = cancel
	go func() {
		var err error
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("the agent panicked: %v\n%s", r, debug.Stack())
			}
			outW.Close()
			inR.Close()
			l.err = err
			close(l.ended)
		}()
		err = serve(ctx, inR, io.MultiWriter(l.Received, outW), l.Stderr)
	}()
	return l
}

// startLink starts cmd, an agent speaking ACP on its stdio, in a process
// group of its own (killed whole when the test stops it). Its stderr is
// kept unless cmd already sends it somewhere.
func startLink(t testing.TB, cmd *exec.Cmd) *link {
	t.Helper()
	l := newLink(t)
	l.Cmd = cmd
	if cmd.Stderr == nil {
		cmd.Stderr = l.Stderr
	}
	ownGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the agent: %v", err)
	}
	l.stdin = stdin
	l.kill = func() { killGroup(cmd) }
	pr, pw := io.Pipe()
	l.stdout = pr
	go func() {
		// Recorded before the editor reads it, so that checks on the
		// raw stream never run ahead of what the editor saw; waited for
		// once read whole, as exec.Cmd wants.
		_, err := io.Copy(io.MultiWriter(l.Received, pw), out)
		pw.CloseWithError(err)
		l.err = cmd.Wait()
		close(l.ended)
	}()
	return l
}

// writer is what the editor writes with: to the agent, and recorded.
func (l *link) writer() io.Writer { return io.MultiWriter(l.stdin, l.Sent) }

// CloseInput closes the agent's stdin: the editor went away.
func (l *link) CloseInput() { l.stdin.Close() }

// WaitExit waits for the agent to end and returns how it ended: nil, or
// its exit status (or panic) as an error. An agent that does not end
// within ten seconds fails the test: it is waited for once its input
// closed or it was told to go, and lingering is the bug.
func (l *link) WaitExit() error {
	l.t.Helper()
	select {
	case <-l.ended:
		return l.err
	case <-time.After(exitBound):
		l.t.Fatalf("the agent did not end within %v", exitBound)
		return nil
	}
}

// Exited is closed once the agent ended; WaitExit says how.
func (l *link) Exited() <-chan struct{} { return l.ended }

// leave is the end of a test for a well-behaved agent: its input closes,
// and it must end within exitBound, or the test fails and it is killed.
func (l *link) leave() {
	l.stdin.Close()
	select {
	case <-l.ended:
		return
	case <-time.After(exitBound):
	}
	l.t.Errorf("the agent did not end within %v of its input closing", exitBound)
	l.kill()
	<-l.ended
}

// stop ends the agent at once, its test being over.
func (l *link) stop() {
	l.kill()
	l.stdin.Close()
	select {
	case <-l.ended:
	case <-time.After(exitBound):
		l.t.Errorf("the agent did not end within %v of being stopped", exitBound)
	}
}

// logStderr shows what the agent wrote on stderr, once its test failed.
func (l *link) logStderr() {
	if l.t.Failed() && l.Stderr.String() != "" {
		l.t.Logf("agent stderr:\n%s", l.Stderr)
	}
}
