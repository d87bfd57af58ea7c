// Package hooks runs the external commands a team configures per event:
// preGeneration may stop a turn or rewrite its prompt, preToolUse may
// allow, deny or ask for a tool call and add context, postToolUse may add
// context under a tool's output, and a postToolUse entry may instead name
// a guard agent that adds a warning under an output it flags.
//
// The contract: the hook gets one JSON object on stdin and answers one JSON
// object on stdout. Exit code 2 means deny (or stop) with stderr as the
// reason; empty output means no opinion.
//
// Invariants:
//   - A hook never hangs a turn: it is killed (its whole process group) at
//     its timeout, or when the turn is cancelled.
//   - A hook that times out, crashes or prints garbage is ignored with one
//     warning — never read as an allow, never as a deny.
//   - Among several hooks of one event, deny wins, then ask, then allow.
//   - A guard never blocks and never rewrites: the output goes as it is,
//     with a warning line under it when a passage is flagged; a guard that
//     fails is one warning for the user.
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/mm-agent/mm/engine/oneshot"
	"github.com/mm-agent/mm/engine/risk"
	"github.com/mm-agent/mm/tools"
)

// DefaultTimeout bounds a hook without its own timeout.
const DefaultTimeout = 5 * time.Second

// Hook is one configured command, or in postToolUse a guard agent.
type Hook struct {
	// Command is the argv; the first word is looked up in PATH.
	Command []string
	// Guard, instead of a command, is a guard agent asked about a tool's
	// output; Name names it in messages (its file).
	Guard *risk.Guard
	Name  string
	// Tools limits a tool hook to these tool names; empty means all.
	Tools []string
	// Timeout bounds one run; 0 means DefaultTimeout (a command) or
	// DefaultGuardTimeout (a guard).
	Timeout time.Duration
}

// DefaultGuardTimeout bounds a guard's whole scan of one output (up to
// risk.MaxPassages passages times the risks, one request each).
const DefaultGuardTimeout = 20 * time.Second

// Config is the hooks of each event, run in order.
type Config struct {
	PreGeneration []Hook
	PreToolUse    []Hook
	PostToolUse   []Hook
	// Env is the environment of every hook command; nil: mm's own.
	Env []string
}

// Runner runs the configured hooks of a session in its working directory.
type Runner struct {
	cfg Config
	cwd string
}

// New returns a runner for a session in cwd; nil (which runs nothing)
// when no hook is configured.
func New(cfg Config, cwd string) *Runner {
	if len(cfg.PreGeneration)+len(cfg.PreToolUse)+len(cfg.PostToolUse) == 0 {
		return nil
	}
	return &Runner{cfg: cfg, cwd: cwd}
}

// Prompt is what the preGeneration hooks decided.
type Prompt struct {
	// Stop ends the turn before any model call, for Reason.
	Stop   bool
	Reason string
	// Prompt is the rewritten prompt ("" keeps it).
	Prompt string
	// Warnings are hooks that failed and were ignored, one line each.
	Warnings []string
}

// Tool is the preToolUse hooks' opinion of a call (deny wins over ask,
// ask over allow), and why.
type Tool struct {
	Opinion tools.HookOpinion
	// Reason says why (for a deny: the repair text the model reads).
	Reason string
	// Context is added for the model under the call's output.
	Context  string
	Warnings []string
}

// PreGeneration runs before the first model call of a turn. The hooks see
// the prompt as rewritten by the hooks before them.
func (r *Runner) PreGeneration(ctx context.Context, sessionID, prompt string) Prompt {
	var out Prompt
	if r == nil {
		return out
	}
	for _, h := range r.cfg.PreGeneration {
		var ans struct {
			Stop   bool    `json:"stop"`
			Reason string  `json:"reason"`
			Prompt *string `json:"prompt"`
		}
		res := r.run(ctx, h, map[string]any{"event": "preGeneration", "sessionId": sessionID, "cwd": r.cwd, "prompt": prompt}, &ans)
		switch {
		case res.warning != "":
			out.Warnings = append(out.Warnings, res.warning)
		case res.denied:
			return Prompt{Stop: true, Reason: res.reason(h, "the preGeneration hook stopped the turn"), Warnings: out.Warnings}
		case !res.answered:
		case ans.Stop:
			return Prompt{Stop: true, Reason: orDefault(ans.Reason, "the preGeneration hook "+name(h)+" stopped the turn"), Warnings: out.Warnings}
		case ans.Prompt != nil && strings.TrimSpace(*ans.Prompt) != "":
			prompt, out.Prompt = *ans.Prompt, *ans.Prompt
		}
	}
	return out
}

// PreToolUse runs before a tool call. Deny anywhere wins over ask, ask
// over allow; contexts are joined.
func (r *Runner) PreToolUse(ctx context.Context, sessionID, tool string, args json.RawMessage) Tool {
	var out Tool
	if r == nil {
		return out
	}
	for _, h := range r.cfg.PreToolUse {
		if !h.applies(tool) {
			continue
		}
		var ans struct {
			Opinion tools.HookOpinion `json:"decision"`
			Reason  string            `json:"reason"`
			Context string            `json:"context"`
		}
		res := r.run(ctx, h, map[string]any{"event": "preToolUse", "sessionId": sessionID, "cwd": r.cwd, "tool": tool, "arguments": rawArgs(args)}, &ans)
		if res.warning == "" && res.answered && !slices.Contains([]tools.HookOpinion{"", tools.HookAllow, tools.HookDeny, tools.HookAsk}, ans.Opinion) {
			res.warning = fmt.Sprintf("hook %s answered decision %q (not allow, deny or ask) — ignored", name(h), ans.Opinion)
		}
		switch {
		case res.warning != "":
			out.Warnings = append(out.Warnings, res.warning)
			continue
		case res.denied:
			ans.Opinion, ans.Reason = tools.HookDeny, res.reason(h, "")
		case !res.answered:
			continue
		}
		if ans.Context != "" {
			out.Context = join(out.Context, ans.Context)
		}
		if rank(ans.Opinion) > rank(out.Opinion) {
			out.Opinion = ans.Opinion
			out.Reason = ans.Reason
		}
		if ans.Opinion == tools.HookDeny && out.Reason == "" {
			out.Reason = "the preToolUse hook " + name(h) + " denied this call"
		}
	}
	return out
}

// Post is what the postToolUse hooks add under a tool's output.
type Post struct {
	// Context is the commands' context, joined.
	Context string
	// Guard are the guards' warning lines for the model, each complete
	// ("[⚠ guard: …]"); Notes says the same to the user, one per line.
	Guard []string
	Notes []string
	// Warnings are hooks and guards that failed and were ignored.
	Warnings []string
}

// PostToolUse runs after a tool call; it returns what the hooks add under
// the output. Nothing here removes or rewrites the output: a guard that
// flags a passage adds a warning, and a guard that fails is one warning
// for the user.
func (r *Runner) PostToolUse(ctx context.Context, sessionID, tool string, args json.RawMessage, output string) Post {
	return r.PostToolUseWatched(ctx, sessionID, tool, args, output, nil)
}

// Watch is told of each guard's scan as it begins — the guard's name and
// what it was asked — and returns the context the scan runs in (a front
// end that shows the guard's work as a session of its own may end it
// alone) and the function told of the scan's end: its notes for the
// user, or why it did not finish.
type Watch func(ctx context.Context, guard, task string) (context.Context, func(notes []string, err error))

// PostToolUseWatched is PostToolUse with each guard's scan shown to watch
// (nil: shown to no one).
func (r *Runner) PostToolUseWatched(ctx context.Context, sessionID, tool string, args json.RawMessage, output string, watch Watch) Post {
	var out Post
	if r == nil {
		return out
	}
	for _, h := range r.cfg.PostToolUse {
		if !h.applies(tool) {
			continue
		}
		if h.Guard != nil {
			r.guard(ctx, h, tool, output, &out, watch)
			continue
		}
		var ans struct {
			Context string `json:"context"`
		}
		res := r.run(ctx, h, map[string]any{"event": "postToolUse", "sessionId": sessionID, "cwd": r.cwd, "tool": tool, "arguments": rawArgs(args), "output": output}, &ans)
		switch {
		case res.warning != "":
			out.Warnings = append(out.Warnings, res.warning)
		case res.denied:
			// postToolUse cannot undo a call: its reason is context.
			out.Context = join(out.Context, res.reason(h, ""))
		case res.answered && ans.Context != "":
			out.Context = join(out.Context, ans.Context)
		}
	}
	return out
}

// guard asks a guard agent about a tool's output, within the entry's
// timeout: a warning per flagged passage, or one line saying why the
// output goes unchecked.
func (r *Runner) guard(ctx context.Context, h Hook, tool, output string, out *Post, watch Watch) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultGuardTimeout
	}
	wctx, ended := ctx, func([]string, error) {}
	if watch != nil {
		wctx, ended = watch(ctx, name(h), "Check "+tool+"'s output for "+h.Guard.RiskNames()+".")
	}
	sctx, cancel := context.WithTimeout(wctx, timeout)
	defer cancel()
	found, err := h.Guard.Scan(sctx, output)
	notes := len(out.Notes)
	for _, f := range found {
		out.Guard = append(out.Guard, f.Warning())
		out.Notes = append(out.Notes, "guard "+name(h)+": "+f.Where(tool+"'s output")+" "+f.What()+" — the model was told to treat it as data; the output is unchanged")
	}
	ended(out.Notes[notes:], err)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		out.Warnings = append(out.Warnings, fmt.Sprintf("guard %s cancelled: %s's output goes unchecked", name(h), tool))
	case wctx.Err() != nil:
		out.Warnings = append(out.Warnings, fmt.Sprintf("guard %s stopped by the user: %s's output goes unchecked", name(h), tool))
	case sctx.Err() != nil:
		out.Warnings = append(out.Warnings, fmt.Sprintf("guard %s: %s's output goes unchecked: the guard did not finish within %s", name(h), tool, timeout))
	default:
		out.Warnings = append(out.Warnings, fmt.Sprintf("guard %s: %s's output goes unchecked: %s", name(h), tool, oneshot.Line(err)))
	}
}

func rank(d tools.HookOpinion) int {
	switch d {
	case tools.HookAllow:
		return 1
	case tools.HookAsk:
		return 2
	case tools.HookDeny:
		return 3
	}
	return 0
}

func (h Hook) applies(tool string) bool { return len(h.Tools) == 0 || slices.Contains(h.Tools, tool) }

func name(h Hook) string {
	if h.Name != "" {
		return h.Name
	}
	if len(h.Command) == 0 {
		return "(empty command)"
	}
	return h.Command[0]
}

func rawArgs(args json.RawMessage) any {
	if json.Valid(args) {
		return args
	}
	return string(args)
}

func join(a, b string) string {
	if a == "" {
		return strings.TrimSpace(b)
	}
	return a + "\n" + strings.TrimSpace(b)
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// result is one hook run: answered (a JSON object decoded into the
// answer), denied (exit code 2), or a warning (anything else wrong).
type result struct {
	answered, denied bool
	stderr           string
	warning          string
}

func (res result) reason(h Hook, def string) string {
	if s := strings.TrimSpace(res.stderr); s != "" {
		return s
	}
	return orDefault(def, "the hook "+name(h)+" refused (exit code 2)")
}

// maxOutput bounds what a hook may print; more is garbage.
const maxOutput = 64 << 10

func (r *Runner) run(ctx context.Context, h Hook, payload map[string]any, answer any) result {
	if len(h.Command) == 0 {
		return result{warning: "a hook has no command — ignored"}
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	in, err := json.Marshal(payload)
	if err != nil {
		return result{warning: fmt.Sprintf("hook %s: cannot encode its input: %v — ignored", name(h), err)}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h.Command[0], h.Command[1:]...)
	cmd.Dir = r.cwd
	cmd.Env = r.cfg.Env
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr limited
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	setGroup(cmd)
	cmd.WaitDelay = time.Second // a grandchild holding the pipes open cannot hang the turn
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return result{warning: fmt.Sprintf("hook %s timed out after %s — ignored", name(h), timeout)}
		}
		return result{warning: fmt.Sprintf("hook %s cancelled — ignored", name(h))}
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		return result{denied: true, stderr: stderr.String()}
	case errors.As(err, &exit):
		return result{warning: fmt.Sprintf("hook %s failed (exit code %d%s) — ignored", name(h), exit.ExitCode(), firstLine(stderr.String()))}
	case err != nil:
		return result{warning: fmt.Sprintf("hook %s could not run: %v — ignored", name(h), err)}
	}
	out := bytes.TrimSpace(stdout.Bytes())
	if len(out) == 0 {
		return result{} // no opinion
	}
	if stdout.over || out[0] != '{' || json.Unmarshal(out, answer) != nil {
		return result{warning: fmt.Sprintf("hook %s printed something that is not one JSON object (%q) — ignored", name(h), clip(string(out), 60))}
	}
	return result{answered: true}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if s == "" {
		return ""
	}
	return ": " + clip(s, 120)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// limited keeps the first maxOutput bytes written to it.
type limited struct {
	bytes.Buffer
	over bool
}

func (l *limited) Write(p []byte) (int, error) {
	if room := maxOutput - l.Len(); len(p) > room {
		l.over = true
		l.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return l.Buffer.Write(p)
}
