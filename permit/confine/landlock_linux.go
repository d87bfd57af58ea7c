package confine

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	"github.com/mm-agent/mm/permit/runlater"
)

// landlockMain is `mm __sandbox [--workspace DIR] [--write DIR]…
// [--no-network] -- PROGRAM ARGS…`, the weaker mode: it confines itself
// with Landlock — everything readable and runnable, writable only in the
// workspace's entries that do not run later (runlater.Writable), under
// the --write DIRs, and a few /dev files — then becomes PROGRAM. The confinement is inherited by every child and
// cannot be lifted, so nothing the command starts can write elsewhere,
// whoever allowed it. With --no-network it can neither connect nor
// listen over TCP either (Landlock ABI 4, Linux 6.7); UDP it cannot take.
func landlockMain(args []string, stderr io.Writer) int {
	var writable, files []string
	network := true
	for len(args) >= 1 && args[0] == "--no-network" || len(args) >= 2 && (args[0] == "--write" || args[0] == "--workspace") {
		if args[0] == "--no-network" {
			network = false
			args = args[1:]
			continue
		}
		if args[0] == "--workspace" {
			dirs, fs := runlater.Writable(args[1])
			writable, files = append(writable, dirs...), append(files, fs...)
		} else if args[1] != "" {
			writable = append(writable, args[1])
		}
		args = args[2:]
	}
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(stderr, "mm __sandbox: usage: mm __sandbox [--workspace DIR] [--write DIR]… [--no-network] -- PROGRAM ARGS…")
		return 2
	}
	argv := args[1:]
	files = append(files, "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
	err := landlock.V7.BestEffort().RestrictPaths(
		landlock.RODirs("/"),
		landlock.RWDirs(writable...).IgnoreIfMissing(),
		landlock.RWFiles(files...).IgnoreIfMissing(),
	)
	if err == nil && !network {
		err = landlock.V4.RestrictNet() // no rule: no TCP port at all
	}
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox: cannot confine the command:", err)
		return SetupFailed
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(stderr, "mm: sandbox:", err)
		return 127
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintln(stderr, "mm: sandbox: exec", argv[0]+":", err)
	return 126
}
