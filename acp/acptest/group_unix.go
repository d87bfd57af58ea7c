//go:build unix

package acptest

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, so that what it
// starts ends with it (a new session is one already).
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = !cmd.SysProcAttr.Setsid
}

// killGroup kills cmd's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// signalOf is the name of the signal that ended a process, "" if none.
func signalOf(sys any) string {
	if ws, ok := sys.(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal().String()
	}
	return ""
}
