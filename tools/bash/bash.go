package bash

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/mm-agent/mm/permit/childenv"
	"github.com/mm-agent/mm/permit/confine"
	"github.com/mm-agent/mm/permit/shell"
	"github.com/mm-agent/mm/tools"
	"github.com/sourcegraph/conc"
	"github.com/sourcegraph/conc/panics"
)

//go:embed bash.md
var description string

// Defaults for the zero Options.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 16000
	// maxTimeout caps the timeout the model may ask for: a turn must not
	// sit for an hour on a command that is a background job in disguise.
	maxTimeout = 10 * time.Minute
)

// Options configures the tool. The zero value is usable.
type Options struct {
	// Timeout is how long a command may run unless the call asks for
	// another; 0 means DefaultTimeout (30 s).
	Timeout time.Duration
	// MaxOutput is how many characters of output the model gets, head and
	// tail kept; 0 means DefaultMaxOutput (16,000).
	MaxOutput int
	// Environ is the environment commands start from, before Env
	// filters it; nil means mm's own (os.Environ()). Its HOME is the home
	// directory the catastrophic-command check protects.
	Environ []string
	// Env filters Environ; its zero value drops the usual secrets.
	Env childenv.Policy
	// Sandbox, when set, confines every command (permit/confine) — in
	// the editor's terminal too, where the terminal runs mm's helper
	// around the command — or refuses every one when it cannot.
	Sandbox *confine.Sandbox
	// Named are the files mm's configuration names that run later (hook
	// scripts, servers): read-only to a confined command like .git.
	Named []string
}

// Params are the arguments of a call. They stay minimal: every field is
// paid for in every request and is one more thing a small model gets wrong.
type Params struct {
	Command string `json:"command" desc:"the bash command line"`
	Timeout int    `json:"timeout,omitempty" desc:"seconds before it is killed (max 600)"`
}

// New returns the bash tool.
func New(opts Options) tools.Tool {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	home := ""
	for _, kv := range opts.Environ {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v // the home of the environment commands run in
		}
	}
	r := &runner{opts: opts, home: home, environ: append(opts.Env.Environ(opts.Environ), quietEnv...)}
	return tools.New(tools.Spec[Params]{
		Name:        "bash",
		Kind:        tools.KindExecute,
		Caps:        tools.Anything,
		Description: strings.ReplaceAll(strings.TrimSpace(description), "{timeout}", seconds(opts.Timeout)),
		Describe: func(env tools.Env, p Params) tools.Call {
			return tools.Call{Title: shell.Title(env, p.Command)}
		},
		Run: r.run,
	})
}

// runner holds what every call shares; it is immutable.
type runner struct {
	opts    Options
	home    string
	environ []string // what every command starts with
}

func (r *runner) run(ctx context.Context, env tools.Env, p Params) (tools.Result, error) {
	line := p.Command
	if strings.TrimSpace(line) == "" {
		return tools.Errorf(`[error: "command" is empty — give the command line to run, e.g. "ls"]`), nil
	}
	if why := shell.Refusal(line, r.home); why != "" {
		return tools.Result{Text: why, IsError: true}, nil
	}
	if why := r.opts.Sandbox.Refusal(); why != "" {
		return tools.Result{Text: why, IsError: true}, nil
	}
	d, err := env.Approve(ctx, shell.Approval(ctx, env, line, p, r.opts.Environ))
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return tools.Result{}, fmt.Errorf("ask approval for bash: %w", err)
	}
	if !d.Allowed {
		reason := d.Reason
		if reason == "" {
			reason = "the user declined"
		}
		return tools.Errorf("[not run: %s. The command did not run; do not retry it as is — ask the user what to do, or do it another way]", reason), nil
	}
	var extra []string
	if !d.Asked { // nobody saw it: git runs none of the repository's programs
		extra = shell.GitNeutral
	}
	var box *confine.Run
	if sb := r.opts.Sandbox; sb != nil {
		var why string
		if box, why = sb.Prepare(ctx, confine.Command{Roots: env.Roots(), Dir: env.Cwd(), Named: r.opts.Named}); why != "" {
			return tools.Result{Text: why, IsError: true}, nil
		}
	}
	res, err := r.where(ctx, env, line, r.timeout(p.Timeout), extra, box)
	// What the command made that runs later goes, whatever its end.
	if note := box.Finish(); note != "" && err == nil {
		res.Text = strings.TrimRight(res.Text, "\n") + "\n" + strings.TrimRight(note, "\n")
	}
	return res, err
}

// where runs line in the front end's terminal when it has one, else
// itself. A terminal whose sandbox helper could not set up (the editor
// runs it elsewhere, without namespaces) ran nothing: mm runs it then.
func (r *runner) where(ctx context.Context, env tools.Env, line string, timeout time.Duration, extra []string, box *confine.Run) (tools.Result, error) {
	if t, ok := env.(tools.Terminals); ok {
		res, err := r.inTerminal(ctx, t, env.Cwd(), line, timeout, extra, box)
		if !errors.Is(err, tools.ErrNoTerminal) && !errors.Is(err, errNotConfined) {
			return res, err
		}
	}
	return r.exec(ctx, env.Cwd(), line, timeout, extra, box)
}

// errNotConfined says the terminal's sandbox helper could not set up.
var errNotConfined = errors.New("the terminal could not confine the command")

// inTerminal runs line in the front end's terminal, where the user
// watches it live; the model gets the same text as from exec. The
// terminal's environment is the editor's, with quietEnv added; the
// variables the policy drops from mm's own environment — the editor's,
// which started mm — are unset there too, and the key is masked in the
// output whatever variable held it.
func (r *runner) inTerminal(ctx context.Context, t tools.Terminals, dir, line string, timeout time.Duration, extra []string, box *confine.Run) (tools.Result, error) {
	began := time.Now()
	c := tools.Command{Line: line, Dir: dir, Env: append(append([]string(nil), quietEnv...), extra...), Unset: r.opts.Env.Dropped(r.opts.Environ),
		Timeout: timeout, OutputLimit: 2 * endBytes}
	if box != nil {
		c.Wrap, c.Env = box.Argv(), append(c.Env, box.Env...)
	}
	x, err := t.RunInTerminal(ctx, c)
	if err != nil {
		return tools.Result{}, err
	}
	// The helper could not set up, or the terminal runs elsewhere, where
	// mm's binary is not: the command did not run.
	if box != nil && (x.Code == confine.SetupFailed && strings.Contains(x.Output, "mm: sandbox:") || x.Code == 127 && strings.Contains(x.Output, box.Argv()[0])) {
		return tools.Result{}, errNotConfined
	}
	elapsed := time.Since(began)
	text := r.opts.Env.Mask(output{head: clean([]byte(x.Output))}.render(r.opts.MaxOutput))
	if x.Truncated {
		text = fmt.Sprintf("[… the start of the output was cut: the terminal keeps the last %s …]\n", humanBytes(2*endBytes)) + text
	}
	if strings.TrimSpace(text) == "" {
		text = "(no output)"
	}
	text = strings.TrimRight(text, "\n") + "\n"
	switch {
	case x.TimedOut:
		return tools.Result{Text: text + timeoutAdvice(timeout), IsError: true}, nil
	case x.Code < 0 && x.Signal != "":
		return tools.Result{Text: text + fmt.Sprintf("[killed by %s · %.1fs]", x.Signal, elapsed.Seconds()), IsError: true}, nil
	}
	sigpipe := x.Code == 141 && strings.Contains(line, "|")
	return tools.Result{Text: text + r.opts.Sandbox.Refused(text) + status(x.Code, elapsed, sigpipe), IsError: x.Code != 0 && !sigpipe}, nil
}

// timeout is the call's limit: the model's, capped, or the default.
func (r *runner) timeout(secs int) time.Duration {
	if secs <= 0 {
		return r.opts.Timeout
	}
	return min(time.Duration(secs)*time.Second, maxTimeout)
}

// drainGrace bounds how long, once the shell has exited, its output is
// still read: what it printed is in the pipe already; only a background
// job it left holding the pipe makes the read wait, and that job's later
// output is not the command's.
const drainGrace = 200 * time.Millisecond

// exec runs line and reports what it printed and how it ended. The output
// goes through a pipe into a capture that keeps its two ends only, so no
// command can fill memory or a disk through it.
func (r *runner) exec(ctx context.Context, dir, line string, timeout time.Duration, extra []string, box *confine.Run) (tools.Result, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return tools.Result{}, fmt.Errorf("create output pipe: %w", err)
	}
	var kept capture
	var reader conc.WaitGroup // owned here, joined before the result is read
	reader.Go(func() {
		if r := panics.Try(func() { kept.readFrom(pr) }); r != nil {
			kept.Write([]byte("\n[mm: reading the output failed: " + fmt.Sprint(r.Value) + "]\n"))
		}
	})
	defer func() { pr.SetReadDeadline(time.Now()); reader.Wait(); pr.Close() }()

	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, "bash", "-o", "pipefail", "-c", line)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = pw, pw // an *os.File: Wait does not wait for whoever holds it open
	// a fresh slice: r.environ is shared by concurrent calls
	cmd.Env = append(append([]string(nil), r.opts.Env.Learned.Filter(r.environ)...), extra...)
	detach(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = time.Second // should the group kill fail, Wait still ends

	began := time.Now()
	start, wait := cmd.Start, func() (int, error) {
		err := cmd.Wait()
		return exitCode(cmd.ProcessState), err
	}
	if box != nil { // confined: the sandbox starts it, and says when it ended
		start, wait = func() error { return box.Start(tctx, cmd) }, func() (int, error) { return box.Wait(cmd) }
	}
	err = start()
	pw.Close() // the command holds its own copy
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return tools.Result{}, fmt.Errorf("start bash in %s: %w", dir, err)
	}
	code, waitErr := wait() // returns once the shell exits, or once Cancel killed its group
	elapsed := time.Since(began)
	if ctx.Err() != nil {
		return tools.Result{}, ctx.Err()
	}
	timedOut := tctx.Err() != nil
	var exitErr *exec.ExitError
	if waitErr != nil && !timedOut && !errors.As(waitErr, &exitErr) {
		return tools.Result{}, fmt.Errorf("wait for bash: %w", waitErr)
	}

	pr.SetReadDeadline(time.Now().Add(drainGrace))
	reader.Wait()
	o := kept.output()
	text := r.opts.Env.Mask(o.render(r.opts.MaxOutput))
	if strings.TrimSpace(text) == "" {
		text = "(no output)"
	}
	text = strings.TrimRight(text, "\n") + "\n"
	refused := r.opts.Sandbox.Refused(text)
	if o.unread > 0 {
		// Also at the end, where a later cut of the middle keeps it.
		text += fmt.Sprintf("[the command printed %s; mm kept only its first and last %s]\n", humanBytes(o.total), humanBytes(endBytes))
	}
	if timedOut {
		return tools.Result{Text: text + refused + timeoutAdvice(timeout), IsError: true}, nil
	}
	// pipefail makes `cmd | head` end with 141 when head stops reading
	// early and cmd dies of SIGPIPE: the output is what was asked for.
	sigpipe := code == 141 && strings.Contains(line, "|")
	return tools.Result{Text: text + refused + status(code, elapsed, sigpipe), IsError: code != 0 && !sigpipe}, nil
}

// quietEnv makes programs print plain text and never wait for a human:
// no colours, no pager, no credential prompt.
var quietEnv = []string{
	"TERM=dumb", "NO_COLOR=1", "PAGER=cat", "GIT_PAGER=cat",
	"GIT_TERMINAL_PROMPT=0", "DEBIAN_FRONTEND=noninteractive",
}

// exitCode is the shell's exit status, or 128+signal when the shell itself
// was killed by a signal, as a shell would report it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func status(code int, elapsed time.Duration, sigpipe bool) string {
	s := fmt.Sprintf("[exit code: %d · %.1fs]", code, elapsed.Seconds())
	if sigpipe {
		s += "\n[141 is SIGPIPE: a reader such as head stopped early; not an error]"
	}
	return s
}

func timeoutAdvice(timeout time.Duration) string {
	return fmt.Sprintf("[error: timed out after %s, the command was killed. For servers and long jobs, run it in the background: nohup cmd > cmd.log 2>&1 & then read cmd.log in a later call (tail -20 cmd.log). Or set \"timeout\" (seconds, max 600)]", seconds(timeout))
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%gs", d.Seconds())
}
