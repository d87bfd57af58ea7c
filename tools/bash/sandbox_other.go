//go:build !linux

package bash

import (
	"fmt"
	"io"
)

// LandlockABI is 0 off Linux: there is no Landlock.
func LandlockABI() int { return 0 }

// SandboxMain refuses off Linux.
func SandboxMain(_ []string, stderr io.Writer) int {
	fmt.Fprintln(stderr, "mm: sandbox: landlock exists on Linux only")
	return 126
}
