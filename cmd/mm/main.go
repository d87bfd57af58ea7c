// Command mm is an editor-native coding agent for small local models.
//
//	mm            on a terminal: the REPL; else the ACP agent on stdio
//	mm acp        ACP agent on stdio
//	mm -p "…"     one turn in line mode (-p - reads the prompt from stdin)
//	mm setup      picks a local model server and model, saved in the user's config
//	mm doctor     checks the set-up, one line per check (--json for scripts)
//	mm trust      trusts this workspace's .mm/agent.yaml as it is now
//	mm eval       routing eval (the skill router), tools eval (the tool router) or task eval (the chat model)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/mm-agent/mm/cmd/mm/internal/app"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/doctor"
	"github.com/mm-agent/mm/cmd/mm/internal/eval"
	"github.com/mm-agent/mm/cmd/mm/internal/line"
	"github.com/mm-agent/mm/cmd/mm/internal/logfile"
	"github.com/mm-agent/mm/cmd/mm/internal/setup"
	"github.com/mm-agent/mm/permit/childenv"
	"github.com/mm-agent/mm/permit/confine"
	"github.com/mm-agent/mm/permit/trust"
)

// version and commit are set by the release build (scripts/release:
// -ldflags "-X main.version=v1.2.0 -X main.commit=…"). Left empty, the
// version is the module's from the build info (`go install
// github.com/mm-agent/mm/cmd/mm@v1.2.0` gives v1.2.0), else "devel" (a
// plain go build in a checkout), and the commit is the build info's VCS
// revision when the build recorded one.
var version, commit string

// mmVersion is what ACP initialize's agentInfo says.
func mmVersion() string {
	v, _ := versionOf(version, commit, buildInfo())
	return v
}

// versionLine is what --version prints: "mm VERSION (commit C)".
func versionLine() string {
	v, c := versionOf(version, commit, buildInfo())
	if c == "" {
		return "mm " + v
	}
	return "mm " + v + " (commit " + c + ")"
}

func buildInfo() *debug.BuildInfo {
	bi, _ := debug.ReadBuildInfo()
	return bi
}

// versionOf is the version and the commit (12 digits, "-dirty" when the
// build had uncommitted changes) from the release stamps, else the build
// info (nil: none).
func versionOf(stampV, stampC string, bi *debug.BuildInfo) (v, c string) {
	v, c = stampV, stampC
	if bi == nil {
		bi = &debug.BuildInfo{}
	}
	if v == "" {
		v = "devel"
		if m := bi.Main.Version; m != "" && m != "(devel)" {
			v = m
		}
	}
	if c == "" {
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				c = s.Value[:min(len(s.Value), 12)]
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && c != "" {
			c += "-dirty"
		}
	}
	return v, c
}

// Exit codes (C2).
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func main() {
	hidden := hideSecrets(os.Args[1:])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := environment{vars: config.ProcessEnv(hidden)}
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
}

type flags struct {
	// resume is the session to continue (--resume ID); cont continues the
	// newest session of the workspace (--continue, or --resume alone).
	resume  string
	cont    bool
	fork    string // --fork ID: continue a copy of the saved session ID
	prompt  string
	config  string
	json    bool
	yes     bool
	logFile string
	version bool
}

func parseFlags(env config.Env, args []string, stdout, stderr io.Writer) (flags, []string, error) {
	var f flags
	args, f.resume, f.cont, f.fork = sessionFlags(args)
	args = promptAfterP(args)
	fs := flag.NewFlagSet("mm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	usage := stderr // a usage error; asked for (-h, --help), it goes to stdout
	fs.StringVar(&f.prompt, "p", "", "run one turn in line mode with this prompt (- reads it from stdin)")
	fs.StringVar(&f.config, "c", "", "config file (default: $MM_CONFIG, .mm/agent.yaml, ~/.config/mm/agent.yaml)")
	fs.BoolVar(&f.json, "json", false, "line mode: print one JSON object per event on stdout")
	fs.BoolVar(&f.yes, "yes", false, "line mode: allow edits and commands without asking")
	fs.StringVar(&f.logFile, "log", env.Get("MM_LOG"), "write logs to this file (default: stderr; $MM_LOG)")
	fs.BoolVar(&f.version, "version", false, "print the version")
	fs.Usage = func() {}
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		usage = stdout
	}
	if err != nil {
		fmt.Fprint(usage, usageText)
		fs.SetOutput(usage)
		fs.PrintDefaults()
		fmt.Fprintln(usage, "  -resume [ID]\n    \tline mode: continue the saved session ID (without ID: the newest of this workspace)")
		fmt.Fprintln(usage, "  -continue\n    \tline mode: continue the newest saved session of this workspace")
		fmt.Fprintln(usage, "  -fork ID\n    \tline mode: continue a copy of the saved session ID (the original is left as it was)")
	}
	return f, fs.Args(), err
}

// usageText opens `mm --help`: how mm is run, then its commands, one
// line each, as `go help` lists them; the flags follow.
const usageText = `usage: mm [command] | mm -p "prompt" [--resume [ID] | --continue | --fork ID] [--json] [--yes] [-c config.yaml] [--log file]

Commands:
  (none)   on a terminal, the REPL; else the ACP agent on stdin/stdout
  acp      serve an editor over the Agent Client Protocol on stdin/stdout
  setup    find the model servers on this machine, pick a model, save it in your config
  doctor   check the set-up, from the config to a real tool call, one line per check
  trust    trust this workspace's .mm/agent.yaml as it is now
  eval     measure the skill router, the tool router or the chat model against cases

Use "mm COMMAND --help" for more about a command.

Flags:
`

// subcommandUsage is the usage line of each subcommand, printed on stdout
// by `mm SUBCOMMAND --help`.
var subcommandUsage = map[string]string{
	"acp":    "usage: mm acp\n  serves an editor over the Agent Client Protocol on stdin/stdout (what `mm` does when stdin is not a terminal)",
	"setup":  setup.Usage,
	"doctor": "usage: mm doctor [--json]\n  checks the set-up (config, model server, window, tool calls, language servers, MCP servers, skills, state directory), one line per check",
	"trust":  "usage: mm trust [--yes]\n  trusts this workspace's .mm/agent.yaml as it is now (its files are shown first; any change makes it untrusted again)",
	"eval":   eval.Usage + "\n  routing: the skill router against cases; tools: the tool router; tasks: the chat model against tasks (built-in cases without a file)",
}

// wantsHelp reports whether args (after the subcommand) ask for help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help":
			return true
		case "--":
			return false
		}
	}
	return false
}

// sessionFlags takes --resume [ID] and --continue out of args (the flag
// package has no flag with an optional value). An ID is the next argument
// when it looks like one ("sess_…"), so `mm -p --resume "fix it"` and
// `mm --resume sess_1 -p "fix it"` both read as meant.
func sessionFlags(args []string) (rest []string, resume string, cont bool, fork string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), resume, cont, fork
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			name = ""
		}
		switch name {
		case "continue":
			cont = true
		case "fork":
			switch {
			case hasValue:
				fork = value
			case i+1 < len(args):
				fork = args[i+1]
				i++
			}
		case "resume":
			switch {
			case hasValue:
				resume = value
			case i+1 < len(args) && strings.HasPrefix(args[i+1], "sess_"):
				resume = args[i+1]
				i++
			default:
				cont = true
			}
		default:
			rest = append(rest, a)
		}
	}
	return rest, resume, cont, fork
}

// promptAfterP moves -p's prompt back next to it when mm's own flags
// came between: the flag package gives -p the argument that follows it,
// so `mm -p --resume ID --yes "x"` (once --resume ID is taken out) ran
// the prompt "--yes" and left "x" over. Only mm's flags are skipped, so
// a prompt that merely begins with "-" is still the prompt.
func promptAfterP(args []string) []string {
	valued := map[string]bool{"c": true, "log": true}
	known := map[string]bool{"c": true, "log": true, "json": true, "yes": true, "version": true}
	for i, a := range args {
		if a == "--" {
			break
		}
		if a != "-p" && a != "--p" {
			continue
		}
		j := i + 1
		for j < len(args) {
			name, _, hasValue := strings.Cut(strings.TrimLeft(args[j], "-"), "=")
			if !strings.HasPrefix(args[j], "-") || args[j] == "-" || !known[name] {
				break
			}
			if valued[name] && !hasValue {
				j++
			}
			j++
		}
		if j == i+1 || j >= len(args) || args[j] == "--" {
			return args
		}
		out := append([]string{}, args[:i+1]...)
		out = append(out, args[j])
		out = append(out, args[i+1:j]...)
		return append(out, args[j+1:]...)
	}
	return args
}

func run(ctx context.Context, env environment, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "__sandbox" { // the sandbox's helper, not for users
		return confine.Main(args[1:], stderr)
	}
	f, rest, err := parseFlags(env.vars, args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	if len(rest) > 0 && subcommandUsage[rest[0]] != "" && wantsHelp(rest[1:]) {
		fmt.Fprintln(stdout, subcommandUsage[rest[0]])
		return exitOK
	}
	if f.version {
		fmt.Fprintln(stdout, versionLine())
		return exitOK
	}
	mode := "acp"
	switch {
	case f.prompt != "":
		mode = "line"
		if len(rest) > 0 {
			fmt.Fprintf(stderr, "mm: unexpected argument %q after -p (quote the whole prompt)\n", rest[0])
			return exitUsage
		}
	case f.resume != "" || f.cont || f.fork != "":
		fmt.Fprintln(stderr, "mm: --resume, --continue and --fork go with -p \"prompt\"; an editor reopens sessions itself (session/load, session/fork)")
		return exitUsage
	case len(rest) > 0 && rest[0] == "setup":
		mode = "setup"
	case len(rest) > 1 && rest[0] == "acp" && rest[1] == "setup":
		// An editor's terminal auth appends the method's args to the
		// agent's own command (the ACP schema), or runs them alone (the
		// registry's AUTHENTICATION.md): both mean mm setup.
		mode, rest = "setup", rest[1:]
	case len(rest) > 0 && rest[0] == "acp":
		if len(rest) > 1 {
			fmt.Fprintf(stderr, "mm: unexpected argument %q after acp\n", rest[1])
			return exitUsage
		}
	case len(rest) > 0 && rest[0] == "doctor":
		mode = "doctor"
	case len(rest) > 0 && rest[0] == "eval":
		mode = "eval"
	case len(rest) > 0 && rest[0] == "trust":
		mode = "trust"
	case len(rest) > 0:
		fmt.Fprintf(stderr, "mm: unknown command %q — run `mm -p \"…\"` for one turn, or `mm acp` for an editor\n", rest[0])
		return exitUsage
	case line.IsTerminal(stdin) && line.IsTerminal(stdout):
		mode = "repl"
	case line.IsTerminal(stdin):
		fmt.Fprintln(stderr, "mm: stdin is a terminal but stdout is not — run `mm -p \"your request\"`, or `mm` alone on a terminal for the REPL")
		return exitUsage
	}

	if mode == "setup" {
		return setup.Run(ctx, setup.Options{Env: env.vars, In: stdin, Out: stdout, Err: stderr}, rest[1:])
	}
	cwd := env.dir
	if env.dirErr != nil {
		fmt.Fprintln(stderr, "mm: cannot read the working directory:", env.dirErr)
		return exitUsage
	}
	hashes := &trust.Cache{} // a file trust covers is read again only once changed
	readConfig := func() (*config.Config, *config.Trust, error) {
		return config.LoadFor(env.vars, f.config, cwd, app.TrustFile(env.vars), hashes)
	}
	cfg, trust, cfgErr := readConfig()
	if mode == "trust" {
		return runTrust(trust, cfgErr, rest[1:], f.yes, stdin, stdout, stderr)
	}
	if cfgErr != nil && mode != "doctor" {
		fmt.Fprintln(stderr, "mm:", app.ConfigLine(cfgErr))
		if mode != "acp" {
			return exitUsage
		}
		// The editor would only see "the agent server exited": serve, and
		// answer each session/new with this line until the config is fixed.
	}
	if cfg == nil {
		cfg = &config.Config{Source: "built-in defaults"} // doctor reports the error
	}
	known := &childenv.Secrets{} // grows as configs read again name more keys
	known.Add(cfg.KeyEnvs(), cfg.Keys())
	logDir, _ := app.StateDir(env.vars) // none: the terminal front ends log nowhere
	log, closeLog, err := logfile.Open(f.logFile, stderr, mode == "acp", logDir, known)
	if err != nil {
		fmt.Fprintln(stderr, "mm:", err)
		return exitUsage
	}
	defer closeLog()
	warning := trust.Warning()
	if warning != "" && mode != "doctor" && mode != "eval" {
		fmt.Fprintln(stderr, "mm:", warning)
	}
	// The app logs its sandbox first: what confines the commands heads
	// the log of what they did.
	logUntrusted := func() {
		if warning != "" {
			log.Warn("workspace config not trusted", "ignored", strings.Join(trust.Ignored, ","))
		}
	}
	if mode == "doctor" {
		a := app.New(cfg, env.vars, log, nil)
		logUntrusted()
		a.Trust = trust
		a.LSPCold = true
		a.Version = mmVersion()
		defer a.Close()
		return doctor.Run(ctx, a.DoctorHost(), cfgErr, cwd, rest[1:], f.json, stdout, stderr)
	}
	if mode == "eval" {
		a := app.New(cfg, env.vars, log, nil) // eval sessions are not saved
		logUntrusted()
		a.LSPCold = true
		a.Version = mmVersion()
		defer a.Close()
		return eval.Run(ctx, a.EvalHost(), cwd, rest[1:], f.json, stdout, stderr)
	}
	if mode == "acp" {
		logUntrusted()
		exe, _ := os.Executable()
		c := &app.Configs{Read: readConfig, Cwd: cwd, Log: log, Env: env.vars, Store: app.OpenStore(env.vars, log), Warned: warning, Known: known, Exe: exe}
		if cfgErr != nil {
			c.Bad = app.ConfigLine(cfgErr)
			if f.logFile != "" { // else stderr has it already
				log.Error("config", "err", c.Bad)
			}
		}
		return c.Serve(ctx, mmVersion(), stdin, stdout)
	}
	a := app.New(cfg, env.vars, log, app.OpenStore(env.vars, log))
	logUntrusted()
	log.Info("config", "source", cfg.Source)
	if w := a.SandboxWarning(); w != "" {
		fmt.Fprintln(stderr, "mm:", w)
	}
	a.Trust = trust
	a.Version = mmVersion()
	defer a.Close()

	if mode == "line" {
		o := line.Options{Prompt: f.prompt, JSON: f.json, Yes: f.yes, Resume: f.resume, Continue: f.cont, Fork: f.fork}
		return line.Run(ctx, a.LineHost(), o, cwd, stdin, stdout, stderr)
	}
	return line.REPL(ctx, a.LineHost(), cwd)
}
