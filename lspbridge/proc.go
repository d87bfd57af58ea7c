package lspbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// proc is one run of a server process and its JSON-RPC connection. A
// server owns a sequence of procs: a new one after each crash.
type proc struct {
	cmd    *exec.Cmd
	conn   jsonrpc2.Conn
	exited chan struct{} // closed once cmd.Wait returned
	err    error         // cmd.Wait's error, read after exited
	stderr *tail
}

// pipes is the client's end of the server's stdin and stdout. Closing it
// closes both, which makes the connection's reader return.
type pipes struct {
	io.Reader
	io.Writer
	r, w *os.File
}

func (p *pipes) Close() error {
	return errors.Join(p.w.Close(), p.r.Close())
}

// startProc starts argv in dir, in its own process group so that Close can
// end the server and every child it spawned (gopls runs `go list`). The
// pipes are made here rather than with StdoutPipe because cmd.Wait closes
// those as soon as the process exits, racing the reader of the last
// messages. The returned proc is running; handler answers the server.
func startProc(dir string, argv, env []string, log *slog.Logger, handler jsonrpc2.Handler, owner *sync.WaitGroup) (*proc, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &proc{exited: make(chan struct{}), stderr: &tail{log: log, max: 4096}}
	bin, err := lookPath(argv[0], env)
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	cmd := exec.Command(bin, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdin = inR
	cmd.Stdout = outW
	cmd.Stderr = p.stderr
	// A child that keeps stderr open must not hold Wait forever.
	cmd.WaitDelay = time.Second
	setProcessGroup(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p.cmd = cmd
	owner.Go(func() {
		p.err = cmd.Wait()
		close(p.exited)
	})
	p.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(&pipes{Reader: outR, Writer: inW, r: outR, w: inW}))
	// The connection's reader goroutine is joined through conn.Done() by
	// stop, which every proc goes through.
	p.conn.Go(context.Background(), handler)
	return p, nil
}

// stop ends the process: shutdown and exit when polite is set and the
// connection is alive, then, after grace or at once, SIGKILL to the whole
// process group; it returns when the process is reaped and the connection
// reader has returned.
func (p *proc) stop(ctx context.Context, polite bool, grace time.Duration) {
	if polite {
		select {
		case <-p.conn.Done():
		default:
			sctx, cancel := context.WithTimeout(ctx, grace)
			if _, err := p.conn.Call(sctx, "shutdown", nil, nil); err == nil {
				_ = p.conn.Notify(sctx, "exit", nil)
			}
			cancel()
			t := time.NewTimer(grace)
			select {
			case <-p.exited:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
		}
	}
	// The group is killed even after a clean exit: children may remain.
	killGroup(p.cmd)
	<-p.exited
	p.conn.Close()
	<-p.conn.Done()
}

// kill ends the process group at once, without waiting; stop still
// reaps it.
func (p *proc) kill() { killGroup(p.cmd) }

// exitReason says how the process ended, with the end of its stderr.
func (p *proc) exitReason() string {
	reason := "exited"
	if p.err != nil {
		reason = p.err.Error()
	}
	if t := p.stderr.last(); t != "" {
		reason += ": " + t
	}
	return reason
}

// tail keeps the last max bytes a server wrote to stderr, for crash
// reports, and logs each line at debug level.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
	log *slog.Logger
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	if t.log != nil {
		t.log.Debug("server stderr", "text", strings.TrimSpace(string(b)))
	}
	return len(b), nil
}

// last is the last non-empty line written.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	s := strings.TrimSpace(lines[len(lines)-1])
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
