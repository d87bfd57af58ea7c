//go:build !linux

package confine

import (
	"fmt"
	"io"
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
