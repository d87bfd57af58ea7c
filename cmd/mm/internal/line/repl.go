package line

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chzyer/readline"

	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// repl is `mm` on a terminal: a prompt line with editing and
// history, each turn streamed by the line-mode renderer, permissions
// asked inline, Ctrl-C cancelling the turn (twice: exiting), Ctrl-D or
// /exit leaving.
type repl struct {
	h   Host
	cwd string
	rl  *readline.Instance
	out io.Writer

	sess   *engine.Session
	policy *permit.Policy
	extra  []tools.Tool // the MCP servers' tools

	// input routes the lines typed while a turn runs to it (steer.go).
	input *steerInput

	mu      sync.Mutex
	cancel  context.CancelFunc // of the running turn, nil between turns
	steerTo func(string) bool  // the running turn's inbox, nil between turns
	lastC   time.Time          // the last Ctrl-C, for "twice exits"
	leaving bool               // a second Ctrl-C asked to leave
}

// leaveWithin bounds the shutdown a second Ctrl-C starts: the turn's end
// (its tools' process groups killed, the session saved), then the same
// cleanup as Ctrl-D. Past it, mm exits anyway.
const leaveWithin = 5 * time.Second

// replCommand is one slash command of the REPL; it returns false to exit.
type replCommand struct {
	help string
	run  func(r *repl, ctx context.Context, args string) bool
}

// replCommands is the table of slash commands. Anything else starting
// with / goes to the session, where skills answer /name.
var replCommands = map[string]replCommand{
	"help": {"this list", nil}, // run by command: it lists this table
	"exit": {"leave mm (also Ctrl-D)", func(*repl, context.Context, string) bool { return false }},
	"new": {"start a new conversation", func(r *repl, _ context.Context, _ string) bool {
		r.newSession()
		fmt.Fprintln(r.out, "mm: new conversation")
		return true
	}},
	"compact": {"summarise the older part of the conversation to free context", func(r *repl, ctx context.Context, _ string) bool {
		r.turn(ctx, "/compact") // the engine answers it
		return true
	}},
	"mode": {"[" + strings.ReplaceAll(permit.ModeIDs(), ", ", "|") + "] — show or switch the permission mode", func(r *repl, _ context.Context, args string) bool {
		if args != "" {
			m, ok := permit.ParseMode(args)
			if !ok {
				fmt.Fprintf(r.out, "mm: no mode %q — %s\n", args, permit.ModeIDs())
				return true
			}
			r.setMode(m)
		}
		fmt.Fprintf(r.out, "mm: mode: %s (%s)\n", r.policy.Mode(), r.policy.Mode().Description())
		return true
	}},
	"model": {"[NAME] — show or switch the model", func(r *repl, _ context.Context, args string) bool {
		if args != "" {
			r.sess.SetModel(args)
		}
		m := r.sess.Model()
		if m == "" {
			m = "the server's first model"
		}
		fmt.Fprintln(r.out, "mm: model:", m)
		return true
	}},
	"skills": {"list the skills", func(r *repl, ctx context.Context, _ string) bool {
		r.turn(ctx, "/skills")
		return true
	}},
	"skill": {"NAME [params] — run a skill", func(r *repl, ctx context.Context, args string) bool {
		if args == "" {
			fmt.Fprintln(r.out, "mm: /skill NAME [params] — /skills lists them")
			return true
		}
		r.turn(ctx, "$"+args)
		return true
	}},
}

// REPL runs the REPL on the terminal until /exit, Ctrl-D or a second
// Ctrl-C, and returns the process exit code.
func REPL(ctx context.Context, h Host, cwd string) int {
	input := newSteerInput(os.Stdin)
	cfg := &readline.Config{Prompt: "mm> ", InterruptPrompt: "^C", EOFPrompt: "", HistorySearchFold: true, Stdin: input.editor()}
	if dir := h.StateDir; dir != "" && os.MkdirAll(dir, 0o755) == nil {
		cfg.HistoryFile = filepath.Join(dir, "history")
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mm: cannot open the terminal:", err)
		return exitcode.Usage
	}
	defer rl.Close()
	r := &repl{h: h, cwd: cwd, rl: rl, out: rl.Stdout(), input: input}
	h.Notice(func(s string) { fmt.Fprintln(r.out, dim+s+reset) })
	extra, notes, stop := h.MCP(ctx, cwd)
	defer stop()
	for _, n := range notes {
		fmt.Fprintln(r.out, "mm: ⚠ "+n)
	}
	r.extra = extra
	r.newSession()

	// Ctrl-C during a turn arrives as SIGINT (the terminal is not in raw
	// mode then): it cancels the turn; a second one exits. main's
	// interrupt context must not see it, or the whole REPL would end.
	signal.Reset(os.Interrupt)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
			if r.interrupt() {
				r.leave()
			}
		}
	}()

	fmt.Fprintln(r.out, dim+"mm "+h.Version+" — /help for commands, Ctrl-D to leave"+reset)
	for ctx.Err() == nil {
		rl.SetPrompt("mm> ")
		line, err := rl.Readline()
		if r.left() {
			return exitcode.Interrupted
		}
		if errors.Is(err, readline.ErrInterrupt) {
			if r.interrupt() {
				return exitcode.OK
			}
			if strings.TrimSpace(line) == "" {
				fmt.Fprintln(r.out, dim+"(Ctrl-C again, Ctrl-D or /exit to leave)"+reset)
			}
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			return exitcode.OK
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !r.command(ctx, line) {
			return exitcode.OK
		}
		if r.left() {
			return exitcode.Interrupted
		}
	}
	return exitcode.OK
}

// leave is the second Ctrl-C: the running turn is cancelled and the line
// editor closed, so that whatever waits on it (the prompt, a permission
// question) returns; REPL then leaves through the normal shutdown —
// the turn saved, MCP servers, language servers and their process
// groups stopped — as Ctrl-D does. Should that take longer than
// leaveWithin, mm exits anyway.
func (r *repl) leave() {
	r.mu.Lock()
	already := r.leaving
	r.leaving = true
	cancel := r.cancel
	r.mu.Unlock()
	if already {
		return
	}
	if cancel != nil {
		cancel()
	}
	time.AfterFunc(leaveWithin, func() {
		fmt.Fprintln(os.Stderr, "mm: shutdown took too long; exiting")
		os.Exit(exitcode.Interrupted)
	})
	r.rl.Close()
}

// left reports whether a second Ctrl-C asked to leave.
func (r *repl) left() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leaving
}

// command runs a slash command or a turn; false means exit.
func (r *repl) command(ctx context.Context, line string) bool {
	if name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " "); strings.HasPrefix(line, "/") {
		if name == "help" {
			r.help()
			return true
		}
		if c, ok := replCommands[name]; ok {
			return c.run(r, ctx, strings.TrimSpace(args))
		}
	}
	r.turn(ctx, line)
	return true
}

func (r *repl) help() {
	names := make([]string, 0, len(replCommands))
	for n := range replCommands {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(r.out, "  /%-8s %s\n", n, replCommands[n].help)
	}
	for _, l := range r.h.AskHelp {
		fmt.Fprintln(r.out, l)
	}
	fmt.Fprintln(r.out, "  Ctrl-C cancels the turn (twice: leave), Ctrl-D leaves; $skill or /skill-name runs a skill")
}

func (r *repl) newSession() {
	ws, policy, err := r.h.Workspace(r.cwd, r.ask)
	if err != nil {
		fmt.Fprintln(r.out, "mm:", err)
		return
	}
	if r.policy != nil {
		policy.SetMode(r.policy.Mode()) // /new keeps the mode
	}
	r.policy = policy
	r.sess = r.h.Session(store.NewID(), r.cwd, ws, r.extra)
	r.sess.AdoptMode(policy)
}

// interrupt handles one Ctrl-C: it cancels the running turn, or, at the
// prompt, reports whether this is the second in a row (exit).
func (r *repl) interrupt() (exit bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	second := time.Since(r.lastC) < 3*time.Second
	r.lastC = time.Now()
	if r.cancel != nil {
		if second {
			return true
		}
		r.cancel()
		fmt.Fprintln(r.out, "\nmm: cancelling — Ctrl-C again to leave")
		return false
	}
	return second
}

// turn plays one prompt through the session, rendered as line mode does.
// A line typed while it runs steers it: the model reads it before its
// next call.
func (r *repl) turn(ctx context.Context, prompt string) {
	ctx, cancel := context.WithCancel(ctx)
	lr := &renderer{out: r.out, err: r.out, colour: Colour(os.Stdout, r.h.Getenv), atStart: true}
	in := &engine.Inbox{}
	put := func(line string) bool {
		if !in.Put(line) {
			return false
		}
		// Said at once, on a line of its own: the model may be busy for
		// a while (a long command) before it reads it.
		fmt.Fprintln(r.out, "\n"+lr.paint(dim, "mm: ↳ queued for the model's next step"))
		return true
	}
	r.mu.Lock()
	r.cancel, r.steerTo = cancel, put
	r.mu.Unlock()
	r.input.steer(put)
	defer func() {
		r.input.steer(nil)
		r.mu.Lock()
		r.cancel, r.steerTo = nil, nil
		r.mu.Unlock()
		cancel()
	}()
	inAnswer := false // the cursor is in the streamed answer
	r.sess.RunSteered(ctx, prompt, in, func(e engine.Event) {
		// One terminal for answer and activity: the answer starts on its
		// own line, and what follows it knows where the cursor is.
		text, isText := e.(engine.Text)
		switch {
		case isText && text.Text == "":
			return
		case isText && !inAnswer && !lr.atStart:
			fmt.Fprintln(r.out)
		case !isText && inAnswer:
			lr.answered = false // its newline is written here
			if !lr.atStart {
				fmt.Fprintln(r.out)
			}
			lr.atStart = true
		}
		lr.render(e)
		inAnswer = isText
		if isText {
			lr.atStart, lr.inThink = strings.HasSuffix(text.Text, "\n"), false
		}
	})
}

// ask is the inline permission prompt: the turn waits here, on the same
// line editor, for y / a / n / v; Ctrl-C refuses and cancels the turn.
// The detail block is printed once, above: the line editor redraws its
// prompt at every keystroke, and a prompt of several lines left a copy
// of the block's first line on the screen each time.
func (r *repl) ask(ctx context.Context, req tools.Approval) (permit.Answer, error) {
	// The answer is typed to the question, not to the turn.
	r.input.steer(nil)
	defer func() {
		r.mu.Lock()
		f := r.steerTo
		r.mu.Unlock()
		r.input.steer(f)
	}()
	q := question(req)
	cut := strings.LastIndex(q, "\n") + 1
	fmt.Fprint(r.out, q[:cut])
	for ctx.Err() == nil {
		r.rl.SetPrompt(q[cut:])
		line, err := r.rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			if r.interrupt() { // cancels the turn; the second leaves
				r.leave()
			}
			return permit.RejectOnce, context.Canceled
		}
		if r.left() {
			return permit.RejectOnce, context.Canceled
		}
		if err != nil {
			return permit.RejectOnce, fmt.Errorf("read the answer: %w", err)
		}
		if a, ok := parseAnswer(line); ok {
			return a, nil
		}
	}
	return permit.RejectOnce, ctx.Err()
}

// setMode switches the permission mode as the editor's mode picker does
// (acp's setMode): the policy enforces it, the session records it, and
// the model is told when plan mode begins or ends.
func (r *repl) setMode(m permit.Mode) { r.sess.SwitchMode(r.policy, m) }
