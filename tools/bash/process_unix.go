//go:build unix

package bash

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// detach makes the shell lead a new session, hence a new process group
// whose id is its pid: killGroup can then reach every process the command
// started, and no process of the call can open the user's terminal.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// killGroup kills the shell's whole process group. It is exec.Cmd.Cancel,
// so it reports os.ErrProcessDone when the group is already gone, which
// keeps Wait from reporting a needless error.
func killGroup(cmd *exec.Cmd) error {
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
