package engine

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mm-agent/mm/tools"
)

// KindHook marks the notes about hooks.
const KindHook = "hook"

// preGeneration runs the preGeneration hooks once per turn, before the
// prompt is rewritten and the model called: a hook may stop the turn or
// rewrite the prompt; a failing hook is one ⚠ note.
func (t *turn) preGeneration(ctx context.Context, prompt string) (string, *TurnEnd) {
	r := t.s.opts.Hooks.PreGeneration(ctx, t.s.opts.ID, prompt)
	t.hookWarnings(r.Warnings)
	if r.Stop {
		t.emit(Struggle{Level: Warning, Kind: KindHook, Text: "turn stopped by a hook: " + r.Reason})
		return "", &TurnEnd{Reason: Refusal, Err: r.Reason}
	}
	if r.Prompt != "" {
		return r.Prompt, nil
	}
	return prompt, nil
}

// preTool is what the preToolUse hooks said about one call.
type preTool struct {
	hook    tools.HookOpinion // tools.HookAllow, tools.HookAsk or ""
	context string
}

// preToolUse asks the hooks about a call. A deny returns the result the
// model reads instead of the call's (the call never runs); allow and ask
// travel with the call's approvals to the one Policy.
func (t *turn) preToolUse(ctx context.Context, name string, args json.RawMessage) (preTool, *tools.Result) {
	r := t.s.opts.Hooks.PreToolUse(ctx, t.s.opts.ID, name, args)
	t.hookWarnings(r.Warnings)
	switch r.Opinion {
	case tools.HookDeny:
		t.emit(Struggle{Level: Warning, Kind: KindHook, Text: "a hook denied " + name + ": " + r.Reason})
		text := "[denied by a hook — this call did not run: " + r.Reason + ". Do not retry it; do what the reason says, or another way.]"
		if r.Context != "" {
			text += "\n[hook: " + r.Context + "]"
		}
		return preTool{}, &tools.Result{Text: text, IsError: true}
	case tools.HookAllow, tools.HookAsk:
		return preTool{hook: r.Opinion, context: r.Context}, nil
	}
	return preTool{context: r.Context}, nil
}

// KindGuard marks the notes about what a guard agent flagged.
const KindGuard = "guard"

// postToolUse adds the preToolUse context and what the postToolUse hooks
// say under the output — the hooks' context, the guards' warnings — and
// tells the user what a guard flagged. The output itself is kept byte for
// byte: a guard warns, it never blocks or rewrites.
func (t *turn) postToolUse(ctx context.Context, name string, args json.RawMessage, pre preTool, res tools.Result) tools.Result {
	post := t.s.opts.Hooks.PostToolUseWatched(ctx, t.s.opts.ID, name, args, res.Text, t.watchGuard)
	t.hookWarnings(post.Warnings)
	for _, n := range post.Notes {
		t.emit(Struggle{Level: Warning, Kind: KindGuard, Text: n})
	}
	lines := post.Guard
	for _, c := range []string{post.Context, pre.context} {
		if c != "" {
			lines = append([]string{"[hook: " + c + "]"}, lines...)
		}
	}
	for _, l := range lines {
		if !strings.HasSuffix(res.Text, "\n") {
			res.Text += "\n"
		}
		res.Text += l
	}
	return res
}

// watchGuard shows a guard's scan as its own child session where the
// front end shows subagents (a guard agent is an agent the session
// delegates to): what it checks, then what it found.
func (t *turn) watchGuard(ctx context.Context, guard, task string) (context.Context, func([]string, error)) {
	gctx, child, shown := Delegate(ctx, t.s.opts.Env, Delegation{Agent: "guard " + guard, About: "a guard agent: it checks tool outputs for risks", Task: task})
	if !shown {
		return ctx, func([]string, error) {}
	}
	return gctx, func(notes []string, err error) {
		switch {
		case err != nil && gctx.Err() != nil:
			child.End(TurnEnd{Reason: Cancelled})
			return
		case err != nil:
			child.End(TurnEnd{Reason: Failed, Err: err.Error()})
			return
		case len(notes) == 0:
			child.Emit(Text{Text: "Nothing flagged."})
		}
		for _, n := range notes {
			child.Emit(Text{Text: n + "\n"})
		}
		child.End(TurnEnd{Reason: EndTurn})
	}
}

func (t *turn) hookWarnings(ws []string) {
	for _, w := range ws {
		t.s.opts.Logger.Warn("hook ignored", "why", w)
		t.emit(Struggle{Level: Warning, Kind: KindHook, Text: w})
	}
}

// asksItself reports whether a tool's calls ask permission on their own
// (with their diff or command), so a hook's ask travels with that
// question: every tool that may do more than read the workspace asks.
func asksItself(t tools.Tool) bool {
	return t.Caps()&^tools.Reads != 0
}

// runWithHook runs the call; when a preToolUse hook said ask and the tool
// never asks on its own, the question is asked here first (through the
// one Policy: a deny rule still refuses, yolo still allows), and a yes
// lets the call run without a second question.
func (t *turn) runWithHook(ctx context.Context, env *callEnv, tool tools.Tool, desc tools.Call, args json.RawMessage) (tools.Result, error) {
	if env.hook == tools.HookAsk && !asksItself(tool) {
		d, err := env.Approve(ctx, tools.Approval{Tool: tool.Name(), Kind: tool.Kind(), Caps: tool.Caps(), Title: desc.Title, Key: tool.Name(), Subject: desc.Title, Locations: desc.Locations, Input: args})
		if err != nil {
			return tools.Result{}, err
		}
		if !d.Allowed {
			return tools.Result{Text: "[not run: " + d.Reason + " — a hook asked for this call to be confirmed]", IsError: true}, nil
		}
		env.hook = tools.HookAllow
	}
	return tool.Run(ctx, env, args)
}
