package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
)

// flags are mm's flags, given before a command's name; a command's own
// flags (mm doctor --json, mm trust --yes) set the same fields.
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

// parseFlags parses mm's flags in args; the rest begins with the
// command's name. On an error, and for -h, it prints mm's usage (on stdout
// when asked for).
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
		printUsage(usage)
		fs.SetOutput(usage)
		fs.PrintDefaults()
		fmt.Fprintln(usage, "  -resume [ID]\n    \tline mode: continue the saved session ID (without ID: the newest of this workspace)")
		fmt.Fprintln(usage, "  -continue\n    \tline mode: continue the newest saved session of this workspace")
		fmt.Fprintln(usage, "  -fork ID\n    \tline mode: continue a copy of the saved session ID (the original is left as it was)")
	}
	return f, fs.Args(), err
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

// parseArgs sets c's flags from args, the arguments after its name: each
// must be -name or --name of one of its flags (booleans all). Anything
// else is a usage error, said on stderr naming the argument.
func (c *command) parseArgs(f *flags, args []string, stderr io.Writer) bool {
	fs := flag.NewFlagSet("mm "+c.name, flag.ContinueOnError)
	if c.flags != nil {
		c.flags(fs, f)
	}
	for _, a := range args {
		name, dashed := strings.CutPrefix(a, "-")
		if fl := fs.Lookup(strings.TrimPrefix(name, "-")); dashed && fl != nil {
			fl.Value.Set("true")
			continue
		}
		var only []string
		fs.VisitAll(func(fl *flag.Flag) {
			if len(fl.Name) > 1 { // a one-letter flag is a short spelling of another
				only = append(only, "--"+fl.Name)
			}
		})
		fmt.Fprintf(stderr, "mm: unexpected argument %q after %s", a, c.name)
		if len(only) > 0 {
			fmt.Fprintf(stderr, " (only %s)", strings.Join(only, ", "))
		}
		fmt.Fprintln(stderr)
		return false
	}
	return true
}
