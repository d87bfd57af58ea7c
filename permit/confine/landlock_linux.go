package confine

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockMain is `mm __sandbox [--write DIR]… [--write-file FILE]…
// [--no-network] -- PROGRAM ARGS…`, the weaker mode, for a program other
// than mm that starts the command (the editor's terminal).
func landlockMain(args []string, stderr io.Writer) int {
	lp := landlockPlan{Network: true}
	for len(args) >= 1 && args[0] == "--no-network" || len(args) >= 2 && (args[0] == "--write" || args[0] == "--write-file") {
		switch args[0] {
		case "--no-network":
			lp.Network = false
			args = args[1:]
			continue
		case "--write":
			lp.Dirs = append(lp.Dirs, args[1])
		default:
			lp.Files = append(lp.Files, args[1])
		}
		args = args[2:]
	}
	if len(args) < 2 || args[0] != "--" {
		fmt.Fprintln(stderr, "mm __sandbox: usage: mm __sandbox [--write DIR]… [--write-file FILE]… [--no-network] -- PROGRAM ARGS…")
		return 2
	}
	argv := args[1:]
	// The thread that is confined is the one that execs: never unlocked.
	runtime.LockOSThread()
	if err := confineThread(lp); err != nil {
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

// confineThread puts the calling thread — locked to its goroutine, and
// never to be unlocked — under Landlock as lp says: everything readable
// and runnable, writable only as lp says and a few /dev files, and no
// TCP without the network (Landlock ABI 4, Linux 6.7; UDP it cannot
// take). What the thread starts from then on is confined the same way,
// and nothing it starts can lift that, whoever allowed it.
func confineThread(lp landlockPlan) error {
	dirs := slices.DeleteFunc(slices.Clone(lp.Dirs), func(d string) bool { return d == "" })
	files := append(slices.Clone(lp.Files), "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	err := enforce(landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS}.BestEffort(),
		landlock.RODirs("/"),
		landlock.RWDirs(dirs...).IgnoreIfMissing(),
		landlock.RWFiles(files...).IgnoreIfMissing(),
	)
	if err == nil && !lp.Network {
		err = enforce(landlock.Config{HandledAccessNet: landlock.V4.HandledAccessNet}) // no rule: no TCP port at all
	}
	return err
}

// enforce puts the calling thread — locked to its goroutine, and either
// with no_new_privs or with CAP_SYS_ADMIN in its user namespace — under
// cfg and rules. One thread is all it takes: the command is forked or
// executed from that thread, and inherits its domain. go-landlock's
// Restrict would enforce on every thread of the process (libpsx), which
// stops them all: about half a millisecond a command.
func enforce(cfg landlock.Config, rules ...landlock.Rule) error {
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return err
	}
	defer unix.Close(fd)
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}
