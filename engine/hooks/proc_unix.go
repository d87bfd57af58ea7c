//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// setGroup runs the hook in its own process group, killed whole on
// timeout, so a hook's children cannot outlive it.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
