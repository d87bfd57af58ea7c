//go:build !unix

package lspbridge

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the server; without process groups its children may
// outlive it.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
