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
	// Sandbox, when set, runs every command confined by Landlock to
	// writing inside its working directory — not its files that run
	// later, nor new files at its top (runlater.Writable) — and its own temp
	// dir, and never in the editor's terminal, which mm cannot confine.
	Sandbox *Sandbox
}

// Sandbox names the program that confines a command: mm itself, whose
// hidden `__sandbox` mode is SandboxMain.
type Sandbox struct {
	Exe string
	// TempDir is the one temp directory confined commands may write (their
	// $TMPDIR), private to this mm: granting the shared /tmp would let a
	// command write what other programs keep there — a workspace under
	// /tmp included, its files that run later too. "" grants none.
	TempDir string
}

// NewSandbox returns the sandbox of mm's executable exe, with a private
// temp directory; Close removes it.
func NewSandbox(exe string) (*Sandbox, error) {
	dir, err := os.MkdirTemp("", "mm-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("create the sandbox's temp dir: %w", err)
	}
	return &Sandbox{Exe: exe, TempDir: dir}, nil
}

// Close removes the temp directory and what commands left in it.
func (s *Sandbox) Close() error {
	if s == nil || s.TempDir == "" {
		return nil
	}
	return os.RemoveAll(s.TempDir)
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
	if t, ok := env.(tools.Terminals); ok && r.opts.Sandbox == nil {
		res, err := r.inTerminal(ctx, t, env.Cwd(), line, r.timeout(p.Timeout), extra)
		if !errors.Is(err, tools.ErrNoTerminal) {
			return res, err
		}
	}
	return r.exec(ctx, env.Cwd(), line, r.timeout(p.Timeout), extra)
}

// inTerminal runs line in the front end's terminal, where the user
// watches it live (T4); the model gets the same text as from exec. The
// terminal's environment is the editor's, with quietEnv added; the
// variables the policy drops from mm's own environment — the editor's,
// which started mm — are unset there too, and the key is masked in the
// output whatever variable held it.
func (r *runner) inTerminal(ctx context.Context, t tools.Terminals, dir, line string, timeout time.Duration, extra []string) (tools.Result, error) {
	began := time.Now()
	x, err := t.RunInTerminal(ctx, tools.Command{Line: line, Dir: dir, Env: append(append([]string(nil), quietEnv...), extra...), Unset: r.opts.Env.Dropped(r.opts.Environ),
		Timeout: timeout, OutputLimit: 2 * endBytes})
	if err != nil {
		return tools.Result{}, err
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
	return tools.Result{Text: text + status(x.Code, elapsed, sigpipe), IsError: x.Code != 0 && !sigpipe}, nil
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
func (r *runner) exec(ctx context.Context, dir, line string, timeout time.Duration, extra []string) (tools.Result, error) {
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
	argv := []string{"bash", "-o", "pipefail", "-c", line}
	if sb := r.opts.Sandbox; sb != nil {
		argv = append([]string{sb.Exe, "__sandbox", "--workspace", dir, "--write", sb.TempDir, "--"}, argv...)
	}
	cmd := exec.CommandContext(tctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = pw, pw // an *os.File: Wait does not wait for whoever holds it open
	// a fresh slice: r.environ is shared by concurrent calls
	cmd.Env = append(append([]string(nil), r.opts.Env.Learned.Filter(r.environ)...), extra...)
	if sb := r.opts.Sandbox; sb != nil && sb.TempDir != "" {
		cmd.Env = append(cmd.Env, "TMPDIR="+sb.TempDir) // the last one counts
	}
	detach(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = time.Second // should the group kill fail, Wait still ends

	began := time.Now()
	err = cmd.Start()
	pw.Close() // the command holds its own copy
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, ctx.Err()
		}
		return tools.Result{}, fmt.Errorf("start bash in %s: %w", dir, err)
	}
	waitErr := cmd.Wait() // returns once the shell exits, or once Cancel killed its group
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
	var refused string
	if r.opts.Sandbox != nil {
		refused = refusedNote(text)
	}
	if o.unread > 0 {
		// Also at the end, where a later cut of the middle keeps it.
		text += fmt.Sprintf("[the command printed %s; mm kept only its first and last %s]\n", humanBytes(o.total), humanBytes(endBytes))
	}
	if timedOut {
		return tools.Result{Text: text + refused + timeoutAdvice(timeout), IsError: true}, nil
	}
	code := exitCode(cmd.ProcessState)
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

// refusedNote tells the model why a confined command was refused a
// write in the workspace, when it may have been (it printed "Permission
// denied" or "Operation not permitted").
func refusedNote(out string) string {
	if !strings.Contains(out, "ermission denied") && !strings.Contains(out, "peration not permitted") {
		return ""
	}
	return "[mm: the sandbox lets a command write inside the workspace's directories and its existing top-level files, not create, remove or rename files at the workspace root or beside a file that runs later under another name, nor write files that run later (.git, .mm, .vscode, .envrc…, what they link to), nor write /tmp (use $TMPDIR): write those with write_file, which asks the user, or ask the user to run the command]\n"
}
