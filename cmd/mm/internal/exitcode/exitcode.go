package exitcode

const (
	// OK: the command did what was asked (a turn ended normally).
	OK = 0
	// Failed: the command ran but did not succeed (a failed turn, a
	// failed check, a refused trust).
	Failed = 1
	// Usage: the command line, the config or the environment is wrong;
	// nothing ran.
	Usage = 2
	// Interrupted is a shell's status for a program ended by SIGINT: the
	// REPL left on a second Ctrl-C.
	Interrupted = 130
)
