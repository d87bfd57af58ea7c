package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/workspace"
)

// runLine plays one turn in line mode (C2): the answer on stdout, the rest
// on stderr, or one JSON object per event with --json.
func runLine(ctx context.Context, a *app, f flags, cwd string, stdin io.Reader, stdout, stderr io.Writer) int {
	prompt := f.prompt
	if prompt == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "mm: cannot read the prompt from stdin:", err)
			return exitUsage
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(stderr, "mm: the prompt is empty")
		return exitUsage
	}
	ws, _, err := a.workspace(cwd, lineAsker(f.yes, stderr))
	if err != nil {
		fmt.Fprintln(stderr, "mm:", err)
		return exitUsage
	}
	r := &lineRenderer{out: stdout, err: stderr, json: f.json, colour: colourOK(stderr), atStart: true}
	if !f.json {
		a.notice = func(s string) { r.line(r.paint(dim, s)) }
	}
	sess, code := a.lineSession(f, ws, stderr)
	if code != exitOK {
		return code
	}
	end := sess.Run(ctx, prompt, r.render)
	if a.store != nil && !f.json {
		r.line(r.paint(dim, "[session "+sess.ID()+" · mm -p --resume "+sess.ID()+" \"…\" continues it]"))
	}
	switch end.Reason {
	case engine.EndTurn, engine.MaxTokens:
		return exitOK
	}
	return exitFailed
}

// lineSession is a new session, or the stored one --resume/--continue
// names (C2, E29).
func (a *app) lineSession(f flags, ws *workspace.Workspace, stderr io.Writer) (*engine.Session, int) {
	if f.resume == "" && !f.cont {
		return a.session(store.NewID(), ws.Cwd(), ws), exitOK
	}
	if a.store == nil {
		fmt.Fprintln(stderr, "mm: no saved sessions: set HOME or XDG_STATE_HOME so mm has a state directory")
		return nil, exitUsage
	}
	var rec *store.Record
	var err error
	if f.resume != "" {
		rec, err = a.store.Load(f.resume)
	} else {
		rec, err = a.store.Latest(ws.Cwd())
	}
	switch {
	case errors.Is(err, store.ErrNotFound) && f.resume == "":
		fmt.Fprintln(stderr, "mm: no saved session in "+ws.Cwd()+" — starting a new one")
		return a.session(store.NewID(), ws.Cwd(), ws), exitOK
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrBadID):
		fmt.Fprintf(stderr, "mm: no saved session %s — run mm -p --continue \"…\" for the newest one of this workspace\n", f.resume)
		return nil, exitUsage
	case err != nil:
		fmt.Fprintln(stderr, "mm: cannot read the session:", err)
		return nil, exitFailed
	}
	s := a.session(rec.ID, ws.Cwd(), ws)
	s.Restore(rec)
	return s, exitOK
}

// lineAsker asks on the terminal when there is one; --yes allows all;
// with neither, risky actions are refused with a reason the model reads.
func lineAsker(yes bool, stderr io.Writer) workspace.Asker {
	if yes {
		return func(context.Context, tools.Approval) (bool, bool, error) { return true, false, nil }
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil || !colourOK(stderr) {
		if tty != nil {
			tty.Close()
		}
		return nil
	}
	in := bufio.NewReader(tty)
	return func(ctx context.Context, req tools.Approval) (bool, bool, error) {
		for {
			fmt.Fprintf(tty, "\nmm: %s? [y]es / [a]lways / [n]o / ne[v]er: ", req.Title)
			line, err := in.ReadString('\n')
			if err != nil {
				return false, false, fmt.Errorf("read the answer: %w", err)
			}
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "y", "yes":
				return true, false, nil
			case "a", "always":
				return true, true, nil
			case "n", "no", "":
				return false, false, nil
			case "v", "never":
				return false, true, nil
			}
		}
	}
}

func colourOK(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// lineRenderer renders engine events for a terminal or a script.
type lineRenderer struct {
	out, err io.Writer
	json     bool
	colour   bool

	atStart  bool // stderr is at the start of a line
	inThink  bool
	answered bool // stdout got text
	titles   map[string]string
	usage    engine.Usage
	severe   bool // a severe struggle line was shown
}

const (
	dim    = "\x1b[2m"
	yellow = "\x1b[33m"
	red    = "\x1b[31m"
	reset  = "\x1b[0m"
)

func (r *lineRenderer) paint(code, s string) string {
	if !r.colour {
		return s
	}
	return code + s + reset
}

// line writes a whole line on stderr, first ending any streamed text.
func (r *lineRenderer) line(s string) {
	if !r.atStart {
		fmt.Fprintln(r.err)
	}
	fmt.Fprintln(r.err, s)
	r.atStart = true
	r.inThink = false
}

func (r *lineRenderer) render(e engine.Event) {
	if r.json {
		r.renderJSON(e)
		return
	}
	if r.titles == nil {
		r.titles = map[string]string{}
	}
	switch e := e.(type) {
	case engine.Text:
		io.WriteString(r.out, e.Text)
		r.answered = r.answered || e.Text != ""
	case engine.Thought:
		if !r.inThink {
			r.line(r.paint(dim, "thinking…"))
			r.inThink = true
		}
		io.WriteString(r.err, r.paint(dim, e.Text))
		r.atStart = strings.HasSuffix(e.Text, "\n")
	case engine.Progress:
		r.line(r.paint(dim, e.Text))
	case engine.ToolStarted:
		r.titles[e.ID] = e.Title
		r.line("→ " + e.Title)
	case engine.ToolUpdated:
		if e.Progress != "" {
			r.line(r.paint(dim, "  "+e.Progress))
		}
	case engine.ToolFinished:
		mark := "✓"
		if e.Status == engine.ToolFailed {
			mark = r.paint(red, "✗")
		}
		r.line(mark + " " + r.titles[e.ID])
		if p := strings.TrimRight(e.Preview, "\n"); p != "" {
			r.line(r.paint(dim, "  "+strings.ReplaceAll(p, "\n", "\n  ")))
		}
	case engine.Struggle:
		code, mark := yellow, "⚠"
		if e.Level == engine.Severe {
			code, mark = red, "✖"
		}
		r.severe = r.severe || e.Level == engine.Severe
		r.line(r.paint(code, "mm: "+mark+" "+e.Text))
	case engine.Plan:
		r.line(planList(e))
	case engine.Usage:
		r.usage = e
	case engine.TurnEnd:
		if r.answered {
			fmt.Fprintln(r.out)
		}
		if e.Reason == engine.Failed && e.Err != "" && !r.severe {
			r.line("mm: " + e.Err)
		}
		if e.Prompt+e.Completion > 0 {
			r.line(r.paint(dim, r.footer(e)))
		}
	}
}

// planList is the plan in line mode: one compact line per step.
func planList(p engine.Plan) string {
	var b strings.Builder
	b.WriteString("plan:")
	for _, e := range p.Entries {
		mark := "[ ]"
		switch e.Status {
		case "in_progress":
			mark = "[>]"
		case "completed":
			mark = "[x]"
		}
		b.WriteString("\n  " + mark + " " + e.Content)
	}
	return b.String()
}

func (r *lineRenderer) footer(e engine.TurnEnd) string {
	s := fmt.Sprintf("[%s · prompt %d · completion %d · cached %d tokens", e.Reason, e.Prompt, e.Completion, e.Cached)
	if r.usage.Size > 0 {
		s += fmt.Sprintf(" · context %d/%d", r.usage.Used, r.usage.Size)
	}
	return s + "]"
}

// renderJSON prints one object per event (C2 --json), for scripts and
// hooks: {"type": "text", "text": "…"}.
func (r *lineRenderer) renderJSON(e engine.Event) {
	var v any
	switch e := e.(type) {
	case engine.Text:
		v = map[string]any{"type": "text", "text": e.Text}
	case engine.Thought:
		v = map[string]any{"type": "thought", "text": e.Text}
	case engine.Progress:
		v = map[string]any{"type": "progress", "text": e.Text}
	case engine.ToolStarted:
		v = map[string]any{"type": "tool_call", "id": e.ID, "name": e.Name, "title": e.Title, "kind": e.Kind, "input": e.Input, "locations": e.Locations}
	case engine.ToolUpdated:
		v = map[string]any{"type": "tool_call_update", "id": e.ID, "status": e.Status, "progress": e.Progress}
	case engine.ToolFinished:
		v = map[string]any{"type": "tool_result", "id": e.ID, "status": e.Status, "output": e.Result.Text, "is_error": e.Result.IsError, "diffs": e.Result.Diffs}
	case engine.Plan:
		v = map[string]any{"type": "plan", "entries": e.Entries}
	case engine.Usage:
		v = map[string]any{"type": "usage", "used": e.Used, "size": e.Size, "prompt": e.Prompt, "completion": e.Completion, "cached": e.Cached}
	case engine.Struggle:
		level := "warning"
		if e.Level == engine.Severe {
			level = "severe"
		}
		v = map[string]any{"type": "struggle", "level": level, "kind": e.Kind, "text": e.Text}
	case engine.TurnEnd:
		v = map[string]any{"type": "turn_end", "reason": e.Reason, "error": e.Err, "prompt": e.Prompt, "completion": e.Completion, "cached": e.Cached}
	default:
		return
	}
	b, _ := json.Marshal(v)
	r.out.Write(append(b, '\n'))
}
