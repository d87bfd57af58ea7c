// Command mm is an editor-native coding agent for small local models.
//
//	mm            on a terminal: the REPL; else the ACP agent on stdio
//	mm acp        ACP agent on stdio
//	mm -p "…"     one turn in line mode (-p - reads the prompt from stdin)
//	mm setup      picks a local model server and model, saved in the user's config
//	mm doctor     checks the set-up, one line per check (--json for scripts)
//	mm trust      trusts this workspace's .mm/agent.yaml as it is now
//	mm eval       routing eval (the skill router), tools eval (the tool router) or task eval (the chat model)
//
// main only composes: the commands are values in a table (commands.go),
// each run with what start-up (start.go) read once.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/permit/trust"
)

func main() {
	held, hide := hideSecrets(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := environment{vars: config.ProcessEnv(held), hide: hide}
	env.dir, env.dirErr = os.Getwd()
	os.Exit(run(ctx, env, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// environment is what mm takes from the process it runs in: its
// variables (the hidden secrets included) and its working directory.
// main fills it from the process; run and everything under it read it
// from here, never from the process, so that tests serve many agents
// side by side in one process, each in its own environment and
// directory. Signals stay main's.
type environment struct {
	vars   config.Env
	dir    string
	dirErr error // why dir could not be read; only what needs dir fails
	// hide takes the variables it names out of the process environment
	// before anything starts (hideSecrets: mm executes itself again);
	// nil leaves them, as in the tests that serve mm in process.
	hide func(names []string)
}

// run is `mm args…`: an internal command, or mm's flags then a command
// of the table; it returns the exit code.
func run(ctx context.Context, env environment, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	inv := &invocation{env: env, stdin: stdin, stdout: stdout, stderr: stderr, hashes: &trust.Cache{}}
	if c := find(commands, args); c != nil && c.internal {
		return c.run(ctx, inv, args[1:])
	}
	var err error
	var rest []string
	inv.f, rest, err = parseFlags(env.vars, args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitcode.OK
	}
	if err != nil {
		return exitcode.Usage
	}
	if c, cargs := named(rest); c != nil && wantsHelp(cargs) {
		fmt.Fprintln(stdout, c.usage)
		return exitcode.OK
	}
	if inv.f.version {
		fmt.Fprintln(stdout, versionLine())
		return exitcode.OK
	}
	c, cargs := inv.pick(rest)
	if c == nil || !c.customFlags && !c.parseArgs(&inv.f, cargs, stderr) {
		return exitcode.Usage
	}
	return c.run(ctx, inv, cargs)
}

// pick is the command rest names, with its arguments; without a name, mm
// itself (line mode with -p, else the REPL or the editor's agent). It is
// nil after a usage error, said on stderr.
func (inv *invocation) pick(rest []string) (*command, []string) {
	f := inv.f
	switch {
	case f.prompt != "" && len(rest) > 0:
		fmt.Fprintf(inv.stderr, "mm: unexpected argument %q after -p (quote the whole prompt)\n", rest[0])
		return nil, nil
	case f.prompt == "" && (f.resume != "" || f.cont || f.fork != ""):
		fmt.Fprintln(inv.stderr, "mm: --resume, --continue and --fork go with -p \"prompt\"; an editor reopens sessions itself (session/load, session/fork)")
		return nil, nil
	case len(rest) == 0:
		return cmdAgent, nil
	}
	if c, args := named(rest); c != nil {
		return c, args
	}
	fmt.Fprintf(inv.stderr, "mm: unknown command %q — run `mm -p \"…\"` for one turn, or `mm acp` for an editor\n", rest[0])
	return nil, nil
}

// named is the command the words of rest name, a command's own commands
// following its name (mm acp setup), with the arguments after the names;
// nil when rest names none a user runs.
func named(rest []string) (*command, []string) {
	var c *command
	for list := commands; len(rest) > 0; list = c.subs {
		next := find(list, rest)
		if next == nil || next.internal || next.name == "" {
			break
		}
		c, rest = next, rest[1:]
	}
	return c, rest
}

// find is the command of list that args[0] names; nil when none does.
func find(list []*command, args []string) *command {
	for _, c := range list {
		if len(args) > 0 && c.name == args[0] {
			return c
		}
	}
	return nil
}

// printUsage opens `mm --help`: how mm is run, then its commands, one
// line each, as `go help` lists them; the flags follow.
func printUsage(w io.Writer) {
	fmt.Fprintf(w, "%s\n\nCommands:\n", cmdAgent.usage)
	for _, c := range commands {
		if c.internal {
			continue
		}
		name := c.name
		if name == "" {
			name = "(none)"
		}
		fmt.Fprintf(w, "  %-8s %s\n", name, c.short)
	}
	fmt.Fprint(w, "\nUse \"mm COMMAND --help\" for more about a command.\n\nFlags:\n")
}
