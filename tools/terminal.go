package tools

import (
	"context"
	"errors"
	"time"
)

// ErrNoTerminal says the front end has no terminal to offer: the tool runs
// the command itself.
var ErrNoTerminal = errors.New("the front end offers no terminal")

// Terminals is implemented by an Env whose front end runs commands where
// the user watches them live (an editor's terminal, ACP terminal/*). Tools
// find it by type assertion; an Env that wraps another forwards it, and
// RunInTerminal answers ErrNoTerminal when there is none after all.
type Terminals interface {
	RunInTerminal(ctx context.Context, c Command) (Exit, error)
}

// Command is a command line to run in a terminal.
type Command struct {
	// CallID is the tool call that shows the terminal; the engine fills
	// it in.
	CallID string
	// Line runs with bash -o pipefail -c, in Dir.
	Line string
	// Wrap, when set, is the program line bash runs under: the sandbox's
	// helper, which confines it.
	Wrap []string
	Dir  string
	// Env (NAME=value) is added to the terminal's environment.
	Env []string
	// Unset names variables removed from the terminal's environment
	// before Line runs: the editor's environment is its own, and the
	// secrets mm keeps from its own commands must not reach these either.
	Unset []string
	// Timeout ends the command: it is killed and Exit.TimedOut is set.
	Timeout time.Duration
	// OutputLimit is how many bytes of output the terminal keeps (the
	// last ones); 0 lets the front end choose.
	OutputLimit int
}

// Exit is how a terminal command ended. When ctx was cancelled,
// RunInTerminal kills the command and returns ctx's error instead.
type Exit struct {
	Output string
	// Truncated says the terminal kept only the end of the output.
	Truncated bool
	// Code is the exit code; a command killed by a signal has 128+n when
	// the front end says which, else -1.
	Code     int
	Signal   string
	TimedOut bool
}
