//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// detach puts the server in its own process group, so that killGroup
// reaches the processes it started too.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
