package confine

import (
	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// LandlockABI is the kernel's Landlock ABI version, 0 when it has none
// (an old kernel, or Landlock not enabled).
func LandlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// scope adds Landlock's scopes where the kernel has them (ABI 6, Linux
// 6.12) to the calling thread, which starts the command: the command can
// then neither connect to an abstract Unix socket nor signal a process
// outside its own domain — the abstract sockets of the session (X11's,
// some buses') stay out of reach while the network is on, when no network
// namespace separates them. An older kernel leaves the namespaces alone,
// which already keep other processes out of reach of signals and ptrace.
func scope() {
	if LandlockABI() >= 6 {
		_ = enforce(landlock.Config{Scoped: landlock.V6.Scoped}.BestEffort())
	}
}
