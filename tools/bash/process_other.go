//go:build !unix

package bash

import "os/exec"

// detach does nothing where there are no process groups.
func detach(cmd *exec.Cmd) {}

// killGroup kills the shell only: without process groups its children
// cannot be reached as a whole.
func killGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
