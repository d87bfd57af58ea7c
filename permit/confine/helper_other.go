//go:build !linux

package confine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// SetupFailed is the exit status of a helper that could not confine the
// command: the command did not run.
const SetupFailed = 125

// Main refuses off Linux: namespaces and Landlock are Linux's.
func Main(_ []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "mm: sandbox: commands can be confined on Linux only")
	return SetupFailed
}

// LandlockABI is 0 off Linux: there is no Landlock.
func LandlockABI() int { return 0 }

// Start cannot confine off Linux: New never returns a sandbox that would.
func (r *Run) Start(cmd *exec.Cmd) error {
	return errors.New("commands can be confined on Linux only")
}

// Wait waits for cmd.
func (r *Run) Wait(cmd *exec.Cmd) (int, error) {
	err := cmd.Wait()
	return cmd.ProcessState.ExitCode(), err
}

func killGroup(p *os.Process) { p.Kill() }
