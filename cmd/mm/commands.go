package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/mm-agent/mm/cmd/mm/internal/app"
	"github.com/mm-agent/mm/cmd/mm/internal/doctor"
	"github.com/mm-agent/mm/cmd/mm/internal/eval"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/cmd/mm/internal/line"
	"github.com/mm-agent/mm/cmd/mm/internal/setup"
	"github.com/mm-agent/mm/permit/confine"
)

// A command is one of mm's commands, `mm NAME …`: a value in the table,
// not a branch of main, in the shape of cmd/go's base.Command.
type command struct {
	name  string // the word after mm; "" is mm without one
	usage string // what `mm NAME --help` prints: the usage line, then what it does
	short string // its line in `mm --help`
	// flags declares the command's own flags on fs, bound to f: booleans,
	// each set by -name or --name after the command's name. A command
	// without flags takes no argument.
	flags func(fs *flag.FlagSet, f *flags)
	// customFlags: run reads its arguments itself.
	customFlags bool
	// internal: mm starts it, not a user. It runs before mm's flags are
	// parsed, with its arguments as they come, and mm --help leaves it out.
	internal bool
	// subs are the commands whose name follows this one's.
	subs []*command
	run  func(ctx context.Context, inv *invocation, args []string) int
}

// commands is the table, in the order `mm --help` lists it.
var commands = []*command{cmdAgent, cmdACP, cmdSetup, cmdDoctor, cmdTrust, cmdEval, cmdSandbox}

var (
	cmdAgent = &command{
		usage: `usage: mm [command] | mm -p "prompt" [--resume [ID] | --continue | --fork ID] [--json] [--yes] [-c config.yaml] [--log file]`,
		short: "on a terminal, the REPL; else the ACP agent on stdin/stdout",
		run:   runAgent,
	}
	cmdACP = &command{
		name:  "acp",
		usage: "usage: mm acp\n  serves an editor over the Agent Client Protocol on stdin/stdout (what `mm` does when stdin is not a terminal)",
		short: "serve an editor over the Agent Client Protocol on stdin/stdout",
		// An editor's terminal auth appends the method's args to the
		// agent's own command (the ACP schema), or runs them alone (the
		// registry's AUTHENTICATION.md): both mean mm setup.
		subs: []*command{cmdSetup},
		run:  runACP,
	}
	cmdSetup = &command{
		name:  "setup",
		usage: setup.Usage,
		short: "find the model servers on this machine, pick a model, save it in your config",
		run: func(ctx context.Context, inv *invocation, _ []string) int {
			return setup.Run(ctx, setup.Options{Env: inv.env.vars, In: inv.stdin, Out: inv.stdout, Err: inv.stderr})
		},
	}
	cmdDoctor = &command{
		name:  "doctor",
		usage: "usage: mm doctor [--json]\n  checks the set-up (config, model server, window, tool calls, language servers, MCP servers, skills, state directory), one line per check",
		short: "check the set-up, from the config to a real tool call, one line per check",
		flags: func(fs *flag.FlagSet, f *flags) { fs.BoolVar(&f.json, "json", f.json, "one JSON object on stdout") },
		run:   runDoctor,
	}
	cmdTrust = &command{
		name:  "trust",
		usage: "usage: mm trust [--yes]\n  trusts this workspace's .mm/agent.yaml as it is now (its files are shown first; any change makes it untrusted again)",
		short: "trust this workspace's .mm/agent.yaml as it is now",
		flags: func(fs *flag.FlagSet, f *flags) {
			fs.BoolVar(&f.yes, "yes", f.yes, "trust without asking")
			fs.BoolVar(&f.yes, "y", f.yes, "trust without asking")
		},
		run: runTrust,
	}
	cmdEval = &command{
		name:        "eval",
		usage:       eval.Usage + "\n  routing: the skill router against cases; tools: the tool router; tasks: the chat model against tasks (built-in cases without a file)",
		short:       "measure the skill router, the tool router or the chat model against cases",
		customFlags: true, // a kind, a file, --json anywhere
		run:         runEval,
	}
	cmdSandbox = &command{
		name:     "__sandbox", // the sandbox's helper, started by mm around a command
		internal: true,
		run: func(_ context.Context, inv *invocation, args []string) int {
			return confine.Main(args, inv.stderr)
		},
	}
)

// runAgent is mm without a command: one turn in line mode with -p, else
// the REPL on a terminal, else the editor's agent on stdio.
func runAgent(ctx context.Context, inv *invocation, _ []string) int {
	if inv.f.prompt == "" {
		if !line.IsTerminal(inv.stdin) {
			return runACP(ctx, inv, nil)
		}
		if !line.IsTerminal(inv.stdout) {
			fmt.Fprintln(inv.stderr, "mm: stdin is a terminal but stdout is not — run `mm -p \"your request\"`, or `mm` alone on a terminal for the REPL")
			return exitcode.Usage
		}
	}
	st := inv.start(startup{bad: configRefused, warn: true})
	if st == nil {
		return exitcode.Usage
	}
	defer st.closeLog()
	a := inv.app(st, app.Options{Trust: st.trust, Store: app.OpenStore(inv.env.vars, st.log)})
	st.log.Info("config", "source", st.cfg.Source)
	if w := a.SandboxWarning(); w != "" {
		fmt.Fprintln(inv.stderr, "mm:", w)
	}
	defer a.Close()
	if f := inv.f; f.prompt != "" {
		o := line.Options{Prompt: f.prompt, JSON: f.json, Yes: f.yes, Resume: f.resume, Continue: f.cont, Fork: f.fork}
		return line.Run(ctx, a.LineHost(), o, st.cwd, inv.stdin, inv.stdout, inv.stderr)
	}
	return line.REPL(ctx, a.LineHost(), st.cwd)
}

// runACP serves the editor on stdio. The config is read again at each
// session/new (app.ACPAgent); one that does not load is served too: the
// editor would only see "the agent server exited", so each session/new
// answers with its line until it is fixed.
func runACP(ctx context.Context, inv *invocation, _ []string) int {
	st := inv.start(startup{bad: configServed, warn: true, logToState: true})
	if st == nil {
		return exitcode.Usage
	}
	defer st.closeLog()
	st.logUntrusted()
	bad := ""
	if st.cfgErr != nil {
		bad = app.ConfigLine(st.cfgErr)
		if inv.f.logFile != "" { // else stderr has it already
			st.log.Error("config", "err", bad)
		}
	}
	exe, _ := os.Executable()
	c := &app.ACPAgent{Read: inv.readConfig, Cwd: st.cwd, Log: st.log, Env: inv.env.vars, Store: app.OpenStore(inv.env.vars, st.log),
		Bad: bad, Warned: st.trust.Warning(), Known: st.known, Exe: exe}
	return c.Serve(ctx, mmVersion(), inv.stdin, inv.stdout)
}

func runDoctor(ctx context.Context, inv *invocation, _ []string) int {
	st := inv.start(startup{bad: configReported})
	if st == nil {
		return exitcode.Usage
	}
	defer st.closeLog()
	a := inv.app(st, app.Options{Trust: st.trust, LSPCold: true})
	defer a.Close()
	return doctor.Run(ctx, a.DoctorHost(), st.cfgErr, st.cwd, inv.f.json, inv.stdout, inv.stderr)
}

func runEval(ctx context.Context, inv *invocation, args []string) int {
	st := inv.start(startup{bad: configRefused})
	if st == nil {
		return exitcode.Usage
	}
	defer st.closeLog()
	a := inv.app(st, app.Options{LSPCold: true}) // eval sessions are not saved
	defer a.Close()
	return eval.Run(ctx, a.EvalHost(), st.cwd, args, inv.f.json, inv.stdout, inv.stderr)
}
