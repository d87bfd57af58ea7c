//go:build !linux

package confine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// SetupFailed is the exit status of a helper that could not confine the
// command: the command did not run.
const SetupFailed = 125

var errLinuxOnly = errors.New("commands can be confined on Linux only")

// Main refuses off Linux: namespaces and Landlock are Linux's.
func Main(_ []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "mm: sandbox: commands can be confined on Linux only")
	return SetupFailed
}

// LandlockABI is 0 off Linux: there is no Landlock.
func LandlockABI() int { return 0 }

// helper is Linux's: New never returns a sandbox that would start one.
type helper struct{}

func (h *helper) close() {}

func (s *Sandbox) spawn() (*helper, error) { return nil, errLinuxOnly }

// Start cannot confine off Linux: New never returns a sandbox that would.
func (r *Run) Start(ctx context.Context, cmd *exec.Cmd) error {
	return errLinuxOnly
}

// Wait has nothing to wait for: Start started nothing.
func (r *Run) Wait(cmd *exec.Cmd) (int, error) {
	return -1, errLinuxOnly
}

func killGroup(p *os.Process) { p.Kill() }
