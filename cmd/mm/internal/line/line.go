package line

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/workspace"
)

// Host is what the line front end needs of the composition root, as
// acp.Builder is for the ACP front end: cmd/mm fills it from the app of
// the config in use.
type Host struct {
	// Workspace builds the disk environment and permission policy of a
	// session in cwd; ask answers the permission questions.
	Workspace func(cwd string, ask permit.Asker) (*workspace.Workspace, *permit.Policy, error)
	// Session builds an engine session stored under id whose tools run
	// in env, with extra tools (the MCP servers') beside the built-in ones.
	Session func(id, cwd string, env tools.Env, extra []tools.Tool) *engine.Session
	// MCP starts the config's MCP servers for cwd: their tools, one note
	// per server that did not start, and what stops them.
	MCP func(ctx context.Context, cwd string) (ts []tools.Tool, notes []string, stop func())
	// Notice sets where the app's one-time notices to the user go (the
	// model server's, shown dim on the terminal).
	Notice func(show func(string))
	// Answer answers a prompt without a session when the config is not a
	// chat agent (a decision or guard agent); ok is false for a chat
	// agent. Nil: always a chat agent.
	Answer func(ctx context.Context, prompt string, stdout, stderr io.Writer) (code int, ok bool)
	// Store keeps the sessions; nil keeps none (no state directory).
	Store *store.Store
	// AskHelp are the REPL's /help lines of the asked agents' commands.
	AskHelp []string
	// Version is what the REPL's banner says.
	Version string
	// StateDir is mm's state directory, where the REPL keeps its history;
	// "" keeps none.
	StateDir string
	// Getenv reads the environment mm was started with (NO_COLOR, TERM),
	// never the process's; nil reads nothing.
	Getenv func(string) string
}

// Options are the command line of one turn (mm -p).
type Options struct {
	// Prompt is the user's request; "-" reads it from stdin.
	Prompt string
	// JSON prints one JSON object per event on stdout (--json).
	JSON bool
	// Yes allows edits and commands without asking (--yes).
	Yes bool
	// Resume is the saved session to continue (--resume ID); Continue
	// continues the newest one of the workspace; Fork continues a copy of
	// the saved session Fork.
	Resume   string
	Continue bool
	Fork     string
}

// Run plays one turn in line mode: the answer on stdout, the rest
// on stderr, or one JSON object per event with --json. It returns the
// process exit code.
func Run(ctx context.Context, h Host, f Options, cwd string, stdin io.Reader, stdout, stderr io.Writer) int {
	prompt := f.Prompt
	if prompt == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "mm: cannot read the prompt from stdin:", err)
			return exitcode.Usage
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		fmt.Fprintln(stderr, "mm: the prompt is empty")
		return exitcode.Usage
	}
	if h.Answer != nil {
		if code, ok := h.Answer(ctx, prompt, stdout, stderr); ok {
			return code
		}
	}
	ask, closeTTY := Asker(f.Yes, stderr)
	defer closeTTY()
	ws, policy, err := h.Workspace(cwd, ask)
	if err != nil {
		fmt.Fprintln(stderr, "mm:", err)
		return exitcode.Usage
	}
	r := &renderer{out: stdout, err: stderr, json: f.JSON, colour: Colour(stderr, h.Getenv), atStart: true}
	if !f.JSON {
		h.Notice(func(s string) { r.line(r.paint(dim, s)) })
	}
	extra, notes, stop := h.MCP(ctx, cwd)
	defer stop()
	for _, n := range notes {
		r.render(engine.Struggle{Level: engine.Warning, Kind: "mcp", Text: n})
	}
	sess, code := h.session(f, ws, stderr, extra)
	if code != exitcode.OK {
		return code
	}
	sess.AdoptMode(policy)
	end := sess.Run(ctx, prompt, r.render)
	if sess.Saved() && !f.JSON {
		r.line(r.paint(dim, "[session "+sess.ID()+" · mm -p --resume "+sess.ID()+" \"…\" continues it]"))
	}
	switch end.Reason {
	case engine.EndTurn, engine.MaxTokens:
		return exitcode.OK
	}
	return exitcode.Failed
}

// session is a new session, or the stored one --resume/--continue
// names.
func (h Host) session(f Options, ws *workspace.Workspace, stderr io.Writer, extra []tools.Tool) (*engine.Session, int) {
	if f.Resume == "" && !f.Continue && f.Fork == "" {
		return h.Session(store.NewID(), ws.Cwd(), ws, extra), exitcode.OK
	}
	if f.Fork != "" {
		if f.Resume != "" || f.Continue {
			fmt.Fprintln(stderr, "mm: --fork ID continues a copy; it does not go with --resume or --continue")
			return nil, exitcode.Usage
		}
		f.Resume = f.Fork
	}
	if h.Store == nil {
		fmt.Fprintln(stderr, "mm: no saved sessions: set HOME or XDG_STATE_HOME so mm has a state directory")
		return nil, exitcode.Usage
	}
	var rec *store.Record
	var err error
	if f.Resume != "" {
		rec, err = h.Store.LoadIn(ws.Cwd(), f.Resume)
	} else {
		rec, err = h.Store.Latest(ws.Cwd())
	}
	switch {
	case errors.Is(err, store.ErrNotFound) && f.Resume == "":
		fmt.Fprintln(stderr, "mm: no saved session in "+ws.Cwd()+" — starting a new one")
		return h.Session(store.NewID(), ws.Cwd(), ws, extra), exitcode.OK
	case errors.Is(err, store.ErrOtherWorkspace):
		fmt.Fprintf(stderr, "mm: %v — run mm there to continue it\n", err)
		return nil, exitcode.Usage
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrBadID):
		fmt.Fprintf(stderr, "mm: no saved session %s — run mm -p --continue \"…\" for the newest one of this workspace\n", f.Resume)
		return nil, exitcode.Usage
	case err != nil:
		fmt.Fprintln(stderr, "mm: cannot read the session:", err)
		return nil, exitcode.Failed
	}
	if f.Fork != "" { // the copy gets its own id: the original stays as it was
		fork := *rec
		fork.ID = store.NewID()
		if fork.Title != "" {
			fork.Title += " (fork)"
		}
		rec = &fork
	}
	s := h.Session(rec.ID, ws.Cwd(), ws, extra)
	s.Restore(rec)
	return s, exitcode.OK
}

// Asker asks on the terminal when stderr is one (whatever NO_COLOR
// or TERM say about colours); --yes allows all; with neither, risky
// actions are refused with a reason the model reads. The terminal is
// opened at the first question and closed by the returned func.
//
// --yes never answers for a file that runs code later (runlater.RunsLater):
// that is asked on the terminal, or refused without one.
func Asker(yes bool, stderr io.Writer) (permit.Asker, func()) {
	var tty permit.Asker
	closeTTY := func() {}
	if IsTerminal(stderr) {
		t := &ttyAsker{}
		tty, closeTTY = t.ask, t.close
	}
	if !yes {
		return tty, closeTTY
	}
	return func(ctx context.Context, req tools.Approval) (permit.Answer, error) {
		switch {
		case req.RunsLater == "":
			return permit.AllowUnseen, nil
		case tty != nil:
			return tty(ctx, req)
		}
		return 0, fmt.Errorf("%w: %s — --yes and yolo do not answer for it", permit.ErrNoOneToAsk, req.RunsLater)
	}, closeTTY
}

// ttyAsker puts permission questions on /dev/tty.
type ttyAsker struct {
	mu  sync.Mutex // one question at a time
	tty *os.File
	in  *bufio.Reader
}

// ask shows the question and reads the answer. A cancelled ctx (Ctrl-C
// while the question waits) ends the read at once: the pending read's
// deadline is moved to the past.
func (t *ttyAsker) ask(ctx context.Context, req tools.Approval) (permit.Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tty == nil {
		tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return 0, fmt.Errorf("%w: no terminal (%v); run with --yes or set permissions.allow", permit.ErrNoOneToAsk, err)
		}
		t.tty, t.in = tty, bufio.NewReader(tty)
	}
	t.tty.SetReadDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { t.tty.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	for {
		fmt.Fprint(t.tty, "\n"+question(req))
		line, err := t.in.ReadString('\n')
		if ctx.Err() != nil {
			fmt.Fprintln(t.tty)
			t.in.Reset(t.tty) // drop a half-typed answer
			return 0, ctx.Err()
		}
		if err != nil {
			return 0, fmt.Errorf("read the answer: %w", err)
		}
		if strings.TrimSpace(line) == "" {
			return permit.RejectOnce, nil // Enter alone is no
		}
		if a, ok := parseAnswer(line); ok {
			return a, nil
		}
	}
}

// question is the permission question of line mode and the REPL: the
// detail (the whole command and what "always" covers) above the title,
// every character that a terminal would hide or obey (CR, ESC, bidi,
// zero-width) shown as a marker.
func question(req tools.Approval) string {
	var b strings.Builder
	title := strings.ReplaceAll(permit.Shown(req.Title), "\n", "⏎")
	if req.Detail != "" {
		for _, l := range strings.Split(shownOnce(permit.Shown(req.Detail), title), "\n") {
			b.WriteString("  │ " + l + "\n")
		}
	}
	fmt.Fprintf(&b, "mm: %s? [y]es / [a]lways / [n]o / ne[v]er: ", title)
	return b.String()
}

// shownOnce drops the detail's opening code block (the whole command)
// when the title already shows it whole, so that a short command is not
// printed twice on the terminal.
func shownOnce(detail, title string) string {
	if !strings.HasPrefix(detail, "```") {
		return detail
	}
	fence, rest, _ := strings.Cut(detail, "\n")
	fence = strings.TrimRight(fence, "abcdefghijklmnopqrstuvwxyz")
	block, after, ok := strings.Cut(rest, "\n"+fence+"\n")
	if !ok {
		block, after, ok = strings.Cut(rest, "\n"+fence)
	}
	if !ok || strings.Contains(block, "\n") || !strings.Contains(title, "`"+block+"`") {
		return detail
	}
	return after
}

// parseAnswer reads y / a / n / v (or the words); ok is false for
// anything else, which asks again.
func parseAnswer(line string) (permit.Answer, bool) {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return permit.AllowOnce, true
	case "a", "always":
		return permit.AllowAlways, true
	case "n", "no":
		return permit.RejectOnce, true
	case "v", "never":
		return permit.RejectAlways, true
	}
	return 0, false
}

func (t *ttyAsker) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tty != nil {
		t.tty.Close()
		t.tty = nil
	}
}

// Colour says whether w is a terminal that wants colours, by the
// NO_COLOR and TERM of getenv (mm's environment; nil: neither is set).
func Colour(w io.Writer, getenv func(string) string) bool {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return IsTerminal(w) && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// Renderer is the event sink of line mode: the answer on stdout, the
// rest on stderr (one JSON object per event on stdout with jsonOut).
// Benchmarks render through it into io.Discard.
func Renderer(stdout, stderr io.Writer, jsonOut bool) func(engine.Event) {
	r := &renderer{out: stdout, err: stderr, json: jsonOut, atStart: true}
	return r.render
}

// renderer renders engine events for a terminal or a script.
type renderer struct {
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

func (r *renderer) paint(code, s string) string {
	if !r.colour {
		return s
	}
	return code + s + reset
}

// line writes a whole line on stderr, first ending any streamed text.
func (r *renderer) line(s string) {
	if !r.atStart {
		fmt.Fprintln(r.err)
	}
	fmt.Fprintln(r.err, s)
	r.atStart = true
	r.inThink = false
}

func (r *renderer) render(e engine.Event) {
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
	case engine.Steered:
		r.line(r.paint(dim, "↳ the model now reads: "+e.Text))
	case engine.ToolStarted:
		title := strings.ReplaceAll(permit.Shown(e.Title), "\n", "⏎")
		r.titles[e.ID] = title
		r.line("→ " + title)
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
	case engine.ContextStep:
		r.usage.Used, r.usage.Size = e.After, e.Size
		r.line(r.paint(dim, fmt.Sprintf("mm: context %s: %d → %d tokens", e.Step, e.Before, e.After)))
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

func (r *renderer) footer(e engine.TurnEnd) string {
	s := fmt.Sprintf("[%s · prompt %d · completion %d · cached %d tokens", e.Reason, e.Prompt, e.Completion, e.Cached)
	if r.usage.Size > 0 {
		s += fmt.Sprintf(" · context %d/%d", r.usage.Used, r.usage.Size)
	}
	return s + "]"
}

// renderJSON prints one object per event (mm -p --json), for scripts and
// hooks. It is an API: keys are lower case, empty fields are left out, and
// docs/line-mode.md's "mm -p --json events" section lists every event and field (pinned by
// testdata/json/*.golden).
func (r *renderer) renderJSON(e engine.Event) {
	v := jsonEvent(e)
	if v == nil {
		return
	}
	// One Write per event; < > & stay as they are (valid JSON either way,
	// and scripts print these strings).
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		io.WriteString(r.out, b.String())
	}
}

// jsonEventFields is the one place the --json shape is written down: every
// event is this object with the fields of its type set.
type jsonEventFields struct {
	Type       string         `json:"type"`
	ID         string         `json:"id,omitempty"`
	Name       string         `json:"name,omitempty"`
	Title      string         `json:"title,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Level      string         `json:"level,omitempty"`
	Status     string         `json:"status,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Text       string         `json:"text,omitempty"`
	Progress   string         `json:"progress,omitempty"`
	Input      any            `json:"input,omitempty"`
	Output     string         `json:"output,omitempty"`
	IsError    bool           `json:"is_error,omitempty"`
	Error      string         `json:"error,omitempty"`
	Locations  []jsonLocation `json:"locations,omitempty"`
	Diffs      []jsonDiff     `json:"diffs,omitempty"`
	Entries    []jsonPlan     `json:"entries,omitempty"`
	Used       int            `json:"used,omitempty"`
	Size       int            `json:"size,omitempty"`
	Prompt     int            `json:"prompt,omitempty"`
	Completion int            `json:"completion,omitempty"`
	Cached     int            `json:"cached,omitempty"`
	Step       string         `json:"step,omitempty"`
	Before     int            `json:"before,omitempty"`
	After      int            `json:"after,omitempty"`
	Turns      int            `json:"turns,omitempty"`
}

type jsonLocation struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

type jsonDiff struct {
	Path string  `json:"path"`
	Old  *string `json:"old,omitempty"` // absent: the file was created
	New  string  `json:"new"`
}

type jsonPlan struct {
	Content  string `json:"content"`
	Status   string `json:"status,omitempty"`
	Priority string `json:"priority,omitempty"`
}

// jsonEvent maps an event to its --json object; nil for none.
func jsonEvent(e engine.Event) *jsonEventFields {
	switch e := e.(type) {
	case engine.Text:
		return &jsonEventFields{Type: "text", Text: e.Text}
	case engine.Thought:
		return &jsonEventFields{Type: "thought", Text: e.Text}
	case engine.Progress:
		return &jsonEventFields{Type: "progress", Text: e.Text}
	case engine.ToolStarted:
		return &jsonEventFields{Type: "tool_call", ID: e.ID, Name: e.Name, Title: e.Title, Kind: string(e.Kind), Input: jsonInput(e.Input), Locations: jsonLocations(e.Locations)}
	case engine.ToolUpdated:
		return &jsonEventFields{Type: "tool_call_update", ID: e.ID, Status: string(e.Status), Progress: e.Progress}
	case engine.ToolFinished:
		v := &jsonEventFields{Type: "tool_result", ID: e.ID, Status: string(e.Status), Output: e.Result.Text, IsError: e.Result.IsError, Locations: jsonLocations(e.Result.Locations)}
		for _, d := range e.Result.Diffs {
			v.Diffs = append(v.Diffs, jsonDiff{Path: d.Path, Old: d.Old, New: d.New})
		}
		return v
	case engine.Plan:
		v := &jsonEventFields{Type: "plan"}
		for _, p := range e.Entries {
			v.Entries = append(v.Entries, jsonPlan{Content: p.Content, Status: p.Status, Priority: p.Priority})
		}
		return v
	case engine.ContextStep:
		return &jsonEventFields{Type: "context", Step: e.Step, Before: e.Before, After: e.After, Size: e.Size, Turns: e.Turns}
	case engine.Usage:
		return &jsonEventFields{Type: "usage", Used: e.Used, Size: e.Size, Prompt: e.Prompt, Completion: e.Completion, Cached: e.Cached}
	case engine.Struggle:
		level := "warning"
		if e.Level == engine.Severe {
			level = "severe"
		}
		return &jsonEventFields{Type: "struggle", Level: level, Kind: e.Kind, Text: e.Text}
	case engine.TurnEnd:
		return &jsonEventFields{Type: "turn_end", Reason: string(e.Reason), Error: e.Err, Prompt: e.Prompt, Completion: e.Completion, Cached: e.Cached}
	}
	return nil
}

func jsonLocations(ls []tools.Location) []jsonLocation {
	var out []jsonLocation
	for _, l := range ls {
		out = append(out, jsonLocation{Path: l.Path, Line: l.Line})
	}
	return out
}

// jsonInput is the call's arguments as JSON, or as the string the model
// wrote when that was not JSON.
func jsonInput(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return raw
	}
	return string(raw)
}

// IsTerminal says whether r (or a writer) is a terminal.
func IsTerminal(r any) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
