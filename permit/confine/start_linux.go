package confine

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Start starts cmd confined: its program and arguments, directory,
// output and environment as the caller set them, and a SysProcAttr that
// may only ask for a session of its own (Setsid). Under namespaces mm
// starts the inner helper straight into them — one process start instead
// of the outer helper's two — and Wait returns when the command ends.
func (r *Run) Start(cmd *exec.Cmd) error {
	cmd.Env = append(cmd.Env, r.Env...)
	if r.plan == nil {
		cmd.Args = append(append([]string(nil), r.Argv...), cmd.Args...)
		cmd.Path = r.Argv[0]
		return cmd.Start()
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("create the status pipe: %w", err)
	}
	defer pw.Close()
	cmd.Args = append([]string{"mm", "__sandbox", "--init", r.plan.encode(), "--"}, cmd.Args...)
	cmd.Path = r.s.opts.Exe
	cmd.ExtraFiles = []*os.File{pw} // descriptor 3, the inner helper's status
	attr := namespaces(r.plan.Network)
	if cmd.SysProcAttr != nil {
		attr.Setsid = cmd.SysProcAttr.Setsid
	}
	cmd.SysProcAttr = attr
	// Once the command has ended, the end of its context must not kill
	// the jobs it left running: they end with the namespace, or at Close.
	if cancel := cmd.Cancel; cancel != nil {
		cmd.Cancel = func() error {
			if r.ended.Load() {
				return nil
			}
			return cancel()
		}
	}
	cmd.WaitDelay = 0
	if err := cmd.Start(); err != nil {
		pr.Close()
		return err
	}
	r.status = pr
	return nil
}

// Wait waits for the command started by Start — not for the jobs it left
// in the background — and returns its exit status, 128+n when a signal
// ended it.
func (r *Run) Wait(cmd *exec.Cmd) (int, error) {
	if r.status == nil {
		return waited(cmd)
	}
	line, rerr := bufio.NewReader(r.status).ReadString('\n')
	r.status.Close()
	if code, err := strconv.Atoi(strings.TrimSpace(line)); rerr == nil && err == nil {
		r.ended.Store(true)
		r.s.adopt(cmd.Wait, cmd.Process)
		return code, nil
	}
	// No status: the helper could not set up (it said why on the
	// command's output), or the command's group was killed.
	return waited(cmd)
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

// killGroup kills the process group p leads: a confined command's inner
// helper, with every process of its namespace.
func killGroup(p *os.Process) {
	syscall.Kill(-p.Pid, syscall.SIGKILL)
	p.Kill()
}
