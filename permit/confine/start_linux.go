package confine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"
)

// Start starts cmd confined, in a session of its own. Until the command
// has ended, the end of ctx calls cmd.Cancel, or kills the command's
// process group; after, the jobs it left running go on — under
// namespaces until the namespace ends, or Close. Wait must follow.
func (r *Run) Start(ctx context.Context, cmd *exec.Cmd) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(slices.Clone(cmd.Env), r.Env...)
	start := r.startInner
	if r.landlock != nil {
		start = r.startLandlocked
	}
	if err := start(cmd); err != nil {
		return err
	}
	cancel := cmd.Cancel
	if cancel == nil {
		cancel = func() error { killGroup(cmd.Process); return nil }
	}
	r.stop = make(chan struct{})
	r.watch.Go(func() {
		select {
		case <-ctx.Done():
			if !r.ended.Load() {
				cancel()
			}
		case <-r.stop:
		}
	})
	return nil
}

// startLandlocked starts cmd as os/exec does, from a thread of mm's own
// that it confines first (confineThread) and that ends with the start:
// no helper, no second program.
func (r *Run) startLandlocked(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	started := make(chan error, 1)
	go func() {
		// Never unlocked: the confined thread ends with this goroutine.
		runtime.LockOSThread()
		if err := confineThread(*r.landlock); err != nil {
			started <- fmt.Errorf("confine the command: %w", err)
			return
		}
		started <- cmd.Start()
	}()
	return <-started
}

// startInner hands cmd to an inner helper started ahead (the sandbox's
// spare, or a new one when another command took it): its arguments,
// directory, environment and standard files (which must be files, or
// nil for /dev/null), and the plan, then the hooks directories once git
// has named them; cmd.Path, cmd.SysProcAttr and cmd.ExtraFiles are not
// used. cmd.Process is then the helper, whose process group holds the
// command.
func (r *Run) startInner(cmd *exec.Cmd) error {
	stdio, closeStdio, err := stdio(cmd)
	if err != nil {
		return err
	}
	defer closeStdio()
	dir := cmd.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return fmt.Errorf("read the working directory: %w", err)
		}
	}
	req := request{Plan: r.plan, Argv: cmd.Args, Env: cmd.Env, Dir: dir}
	h, err := r.s.take()
	if err != nil {
		return err
	}
	if err = r.handOver(h, req, stdio); err != nil {
		// A spare that died while it waited — the kernel may take a
		// first write or two for it while a process being started
		// elsewhere still holds its end of the socket. The helper starts
		// nothing before the whole plan has come, so a new helper, once.
		h.close()
		if h, err = r.s.spawn(); err == nil {
			if err = r.handOver(h, req, stdio); err != nil {
				h.close()
			}
		}
	}
	if err != nil {
		return fmt.Errorf("hand the command to the sandbox's helper: %w", err)
	}
	r.h, cmd.Process = h, h.proc
	return nil
}

// handOver sends h the request and its standard files, then, once git
// has named the hooks directories, the rest of the plan, and ends what
// it sends: the helper starts the command when it reads that end.
func (r *Run) handOver(h *helper, req request, stdio []*os.File) error {
	if err := h.send(req, stdio); err != nil {
		return err
	}
	// The helper builds the view while git names the hooks.
	r.hooks.Wait()
	if err := h.send(more{ReadOnly: r.late}, nil); err != nil {
		return err
	}
	return h.conn.CloseWrite()
}

// stdio are cmd's standard files for the helper, /dev/null where nil.
func stdio(cmd *exec.Cmd) ([]*os.File, func(), error) {
	var null *os.File
	closeNull := func() {
		if null != nil {
			null.Close()
		}
	}
	out := make([]*os.File, 3)
	for i, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if s == nil {
			if null == nil {
				var err error
				if null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
					return nil, closeNull, err
				}
			}
			out[i] = null
			continue
		}
		f, ok := s.(*os.File)
		if !ok {
			closeNull()
			return nil, func() {}, errors.New("a confined command's standard input, output and error must be files")
		}
		out[i] = f
	}
	return out, closeNull, nil
}

// Wait waits for the command started by Start — not for the jobs it left
// in the background — and returns its exit status, 128+n when a signal
// ended it. Under namespaces the sandbox then starts its next spare
// helper.
func (r *Run) Wait(cmd *exec.Cmd) (int, error) {
	defer func() {
		close(r.stop)
		r.watch.Wait()
	}()
	if r.h == nil {
		code, err := waited(cmd)
		r.ended.Store(true)
		return code, err
	}
	defer func() {
		r.h.conn.Close()
		r.s.refill()
	}()
	if code, ok := r.h.status(); ok {
		r.ended.Store(true)
		r.s.adopt(r.h.proc)
		return code, nil
	}
	// No status: the helper could not set up (it said why on the
	// command's output), or the command's group was killed.
	state, err := r.h.proc.Wait()
	r.ended.Store(true)
	if err != nil {
		return -1, fmt.Errorf("wait for the confined command: %w", err)
	}
	return exitStatus(state), nil
}

// waited waits for cmd: its exit status, and an error only when it could
// not be waited for.
func waited(cmd *exec.Cmd) (int, error) {
	err := cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil
	}
	return exitStatus(cmd.ProcessState), err
}

// exitStatus is a process's exit status, or 128+signal, as a shell says.
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// killGroup kills the process group p leads: a confined command's
// helper, with every process of its namespace.
func killGroup(p *os.Process) {
	syscall.Kill(-p.Pid, syscall.SIGKILL)
	p.Kill()
}
