package confine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
)

// Start starts cmd confined, through a helper started ahead (the
// sandbox's spare, or a new one when another command took it): cmd's
// arguments, directory, environment and standard files (which must be
// files, or nil for /dev/null) go to the helper, which confines and
// starts the command in a session of its own; cmd.Path, cmd.SysProcAttr
// and cmd.ExtraFiles are not used. cmd.Process is then the helper, whose
// process group holds the command. Until the command has ended, the end
// of ctx calls cmd.Cancel (or kills that group); after, the jobs it left
// running end with the namespace, or at Close. Wait must follow.
func (r *Run) Start(ctx context.Context, cmd *exec.Cmd) error {
	stdio, closeStdio, err := stdio(cmd)
	if err != nil {
		return err
	}
	defer closeStdio()
	dir, env := cmd.Dir, cmd.Env
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return fmt.Errorf("read the working directory: %w", err)
		}
	}
	if env == nil {
		env = os.Environ()
	}
	req := request{Plan: r.plan, Landlock: r.landlock, Argv: cmd.Args, Env: append(slices.Clone(env), r.Env...), Dir: dir}
	h, err := r.s.take()
	if err != nil {
		return err
	}
	if err = h.send(req, stdio); err != nil {
		// A spare that died while it waited: a new helper, once.
		h.close()
		if h, err = r.s.spawn(); err == nil {
			if err = h.send(req, stdio); err != nil {
				h.close()
			}
		}
	}
	if err != nil {
		return fmt.Errorf("hand the command to the sandbox's helper: %w", err)
	}
	r.h, cmd.Process = h, h.proc
	cancel := cmd.Cancel
	if cancel == nil {
		cancel = func() error { killGroup(h.proc); return nil }
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
// ended it. The sandbox then starts its next spare helper.
func (r *Run) Wait(cmd *exec.Cmd) (int, error) {
	h := r.h
	defer func() {
		close(r.stop)
		r.watch.Wait()
		h.conn.Close()
		r.s.refill()
	}()
	if r.plan != nil {
		if code, ok := h.status(); ok {
			r.ended.Store(true)
			r.s.adopt(h.proc)
			return code, nil
		}
		// No status: the helper could not set up (it said why on the
		// command's output), or the command's group was killed.
	}
	state, err := h.proc.Wait()
	r.ended.Store(true)
	if err != nil {
		return -1, fmt.Errorf("wait for the confined command: %w", err)
	}
	return exitStatus(state), nil
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
