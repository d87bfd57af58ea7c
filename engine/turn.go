package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/tools"
)

// Run plays one turn: the prompt, then model calls and tool calls until the
// model answers without calling a tool, a bound is reached, or ctx is
// cancelled. Every event goes to emit, in order, from this goroutine (tool
// progress may come from a tool's goroutine while this one waits). The
// returned TurnEnd is also the last event emitted.
//
// A panic inside the turn is recovered and reported as a failed turn, so
// mm keeps serving (ARCHITECTURE rule 7).
func (s *Session) Run(ctx context.Context, prompt string, emit func(Event)) (end TurnEnd) {
	s.turn.Lock()
	defer s.turn.Unlock()
	t := &turn{s: s, emit: s.locked(emit)}
	defer func() {
		if r := recover(); r != nil {
			s.opts.Logger.Error("turn panicked", "panic", r, "stack", string(debug.Stack()))
			end = TurnEnd{Reason: Failed, Err: fmt.Sprintf("internal error: %v (mm is still running; see the log)", r)}
		}
		end.Prompt, end.Completion, end.Cached = t.prompt, t.completion, t.cached
		t.emit(end)
	}()
	return t.run(ctx, prompt)
}

// locked serialises emits so tool progress from another goroutine never
// interleaves with the turn's own events.
func (s *Session) locked(emit func(Event)) func(Event) {
	return func(e Event) {
		s.emitMu.Lock()
		defer s.emitMu.Unlock()
		emit(e)
	}
}

type turn struct {
	s    *Session
	emit func(Event)

	prompt, completion, cached int
}

func (t *turn) run(ctx context.Context, prompt string) TurnEnd {
	s := t.s
	s.append(llm.Message{Role: llm.RoleUser, Content: s.userMessage(prompt)})
	for step := 0; ; step++ {
		if step == s.opts.MaxTurns {
			return t.lastChance(ctx)
		}
		resp, err := t.call(ctx, true)
		if ctx.Err() != nil {
			t.keepPartial(resp)
			return TurnEnd{Reason: Cancelled}
		}
		var ref *refused
		if errors.As(err, &ref) {
			t.refuse(resp, ref)
			continue
		}
		if err != nil {
			t.keepPartial(resp)
			return t.fail("server_error", s.opts.Explain(err))
		}
		msg := llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls}
		if s.opts.SendReasoning {
			msg.Reasoning = resp.Reasoning
		}
		if len(resp.ToolCalls) == 0 {
			return t.answer(msg, resp)
		}
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = s.nextCallID()
			}
		}
		s.append(msg)
		for i, call := range msg.ToolCalls {
			if ctx.Err() != nil {
				t.skipCalls(msg.ToolCalls[i:])
				return TurnEnd{Reason: Cancelled}
			}
			t.runTool(ctx, call)
		}
		if ctx.Err() != nil {
			return TurnEnd{Reason: Cancelled}
		}
	}
}

// refuse records a call stopped by its preflight: the generation was cut
// as soon as the path was known, the call enters history reduced to its
// path, and the refusal is its result (T5).
func (t *turn) refuse(resp llm.Response, r *refused) {
	s := t.s
	if r.id == "" {
		r.id = s.nextCallID()
	}
	args, _ := json.Marshal(map[string]string{"path": r.path})
	call := llm.ToolCall{ID: r.id, Name: r.name, Arguments: string(args)}
	s.append(llm.Message{Role: llm.RoleAssistant, Content: resp.Content, ToolCalls: []llm.ToolCall{call}})
	id := s.nextCallID()
	var title string
	var kind tools.Kind = tools.KindOther
	if tool, ok := s.opts.Tools.Lookup(r.name); ok {
		title, kind = tool.Describe(s.opts.Env, args).Title, tool.Kind()
	}
	t.emit(ToolStarted{ID: id, Name: r.name, Title: title, Kind: kind, Input: args})
	t.finish(id, call, tools.Result{Text: r.text, IsError: true})
}

// answer stores a final text answer and ends the turn.
func (t *turn) answer(msg llm.Message, resp llm.Response) TurnEnd {
	if resp.FinishReason == "length" {
		note := fmt.Sprintf("\n\n[answer cut off at max_tokens (%d) — raise sampling.max_tokens in the config]", t.s.opts.Sampling.MaxTokens)
		t.emit(Text{Text: note})
		msg.Content += note
		t.s.append(msg)
		return TurnEnd{Reason: MaxTokens}
	}
	t.s.append(msg)
	if strings.TrimSpace(msg.Content) == "" {
		t.emit(Struggle{Level: Severe, Kind: "empty_answer", Text: "empty answer: the model returned no text and no tool call"})
	}
	return TurnEnd{Reason: EndTurn}
}

// lastChance is E3: at maxTurns, one call without tools asking for a
// summary of what was done and what remains.
func (t *turn) lastChance(ctx context.Context) TurnEnd {
	s := t.s
	t.emit(Struggle{Level: Severe, Kind: "max_turns", Text: fmt.Sprintf("max turns: %d model calls — asked the model to sum up", s.opts.MaxTurns)})
	s.append(llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(
		"[mm: you reached the limit of %d steps for this turn. Do not call tools. Say briefly what you did and what remains to do.]", s.opts.MaxTurns)})
	resp, err := t.call(ctx, false)
	if ctx.Err() != nil {
		t.keepPartial(resp)
		return TurnEnd{Reason: Cancelled}
	}
	if err != nil {
		t.keepPartial(resp)
		return t.fail("server_error", s.opts.Explain(err))
	}
	// E19: a tool call parsed while no tools were offered is ignored.
	s.append(llm.Message{Role: llm.RoleAssistant, Content: resp.Content})
	return TurnEnd{Reason: MaxTurns}
}

func (t *turn) fail(kind, line string) TurnEnd {
	t.emit(Struggle{Level: Severe, Kind: kind, Text: line})
	return TurnEnd{Reason: Failed, Err: line}
}

// keepPartial stores what the model said before the stream broke, so the
// history holds the whole conversation of the turn (E2).
func (t *turn) keepPartial(resp llm.Response) {
	if strings.TrimSpace(resp.Content) != "" {
		t.s.append(llm.Message{Role: llm.RoleAssistant, Content: resp.Content})
	}
}

// skipCalls answers the calls that did not run, so the history stays a
// valid conversation (every tool call has a result).
func (t *turn) skipCalls(calls []llm.ToolCall) {
	for _, c := range calls {
		t.s.append(llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "[not run: the user cancelled the turn]"})
	}
}

// call sends one request and streams the answer to the user.
func (t *turn) call(ctx context.Context, withTools bool) (llm.Response, error) {
	req := t.s.request(withTools)
	pf := newPreflight(t.s.opts.Tools, t.s.opts.Env)
	resp, err := t.s.opts.Model.Stream(ctx, req, func(d llm.Delta) error {
		switch {
		case d.ToolCall != nil && withTools:
			return pf.feed(d.ToolCall)
		case d.Content != "":
			t.emit(Text{Text: d.Content})
		case d.Reasoning != "":
			t.emit(Thought{Text: d.Reasoning})
		case d.Progress != nil:
			t.emit(Progress{Text: progressLine(d.Progress)})
		}
		return nil
	})
	if !withTools {
		resp.ToolCalls = nil
	}
	t.prompt += resp.Usage.PromptTokens
	t.completion += resp.Usage.CompletionTokens
	t.cached += resp.Usage.CachedTokens
	if err == nil && resp.HasUsage {
		t.s.addTotals(resp.Usage)
		size := 0
		if t.s.opts.ContextWindow != nil {
			size = t.s.opts.ContextWindow(context.WithoutCancel(ctx))
		}
		t.emit(Usage{
			Used:   resp.Usage.PromptTokens + resp.Usage.CompletionTokens,
			Size:   size,
			Prompt: resp.Usage.PromptTokens, Completion: resp.Usage.CompletionTokens, Cached: resp.Usage.CachedTokens,
		})
	}
	return resp, err
}

func (s *Session) addTotals(u llm.Usage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total.Prompt += u.PromptTokens
	s.total.Completion += u.CompletionTokens
	s.total.Cached += u.CachedTokens
}

func progressLine(p *llm.Progress) string {
	return fmt.Sprintf("Reading the prompt %s/%s tokens", kilo(p.Processed), kilo(p.Total))
}

func kilo(n int) string {
	if n < 1000 {
		return itoa(n)
	}
	return fmt.Sprintf("%.1fk", float64(n)/1000)
}

// request builds the next request: one system message, then the history.
func (s *Session) request(withTools bool) llm.Request {
	msgs := append([]llm.Message{{Role: llm.RoleSystem, Content: s.opts.SystemPrompt}}, s.History()...)
	req := llm.Request{
		Model:              s.opts.ModelName,
		Messages:           msgs,
		Sampling:           s.opts.Sampling,
		ReasoningEffort:    s.opts.ReasoningEffort,
		ChatTemplateKwargs: s.opts.ChatTemplateKwargs,
	}
	if withTools {
		for _, tl := range s.opts.Tools.Tools() {
			req.Tools = append(req.Tools, llm.ToolDef{Name: tl.Name(), Description: tl.Description(), Parameters: tl.Schema()})
		}
	}
	return req
}

// runTool runs one call and stores its result in history.
func (t *turn) runTool(ctx context.Context, call llm.ToolCall) {
	s := t.s
	id := s.nextCallID()
	args := json.RawMessage(call.Arguments)
	tool, ok := s.opts.Tools.Lookup(call.Name)
	if !ok {
		res := tools.Errorf("[error: there is no tool named %q; your tools are: %s]", call.Name, s.opts.Tools.Names())
		t.emit(ToolStarted{ID: id, Name: call.Name, Title: call.Name, Kind: tools.KindOther, Input: rawInput(args)})
		t.finish(id, call, res)
		return
	}
	desc := tool.Describe(s.opts.Env, args)
	t.emit(ToolStarted{ID: id, Name: call.Name, Title: desc.Title, Kind: tool.Kind(), Input: rawInput(args), Locations: desc.Locations})
	env := &callEnv{Env: s.opts.Env, id: id, emit: t.emit}
	res, err := tool.Run(ctx, env, args)
	if err != nil {
		if ctx.Err() != nil {
			res = tools.Result{Text: "[not finished: the user cancelled the turn]", IsError: true}
		} else {
			s.opts.Logger.Error("tool failed", "tool", call.Name, "err", err)
			res = tools.Errorf("[error: %s failed: %v]", call.Name, err)
		}
	}
	t.finish(id, call, res)
}

func (t *turn) finish(id string, call llm.ToolCall, res tools.Result) {
	status := ToolCompleted
	if res.IsError {
		status = ToolFailed
	}
	t.emit(ToolFinished{ID: id, Status: status, Result: res, Preview: preview(res.Text, t.s.opts.PreviewLines)})
	t.s.append(llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: res.Text})
}

// rawInput keeps the arguments for display when they are valid JSON.
func rawInput(args json.RawMessage) json.RawMessage {
	if json.Valid(args) {
		return args
	}
	b, _ := json.Marshal(string(args))
	return b
}

func preview(text string, n int) string {
	lines := strings.SplitAfterN(text, "\n", n+1)
	if len(lines) <= n {
		return text
	}
	return strings.Join(lines[:n], "") + "…"
}

// callEnv is the Env of one call: approvals carry the call's id, an
// approval moves the call to in_progress, progress becomes an update.
type callEnv struct {
	tools.Env
	id   string
	emit func(Event)
}

func (c *callEnv) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	req.CallID = c.id
	d, err := c.Env.Approve(ctx, req)
	if err == nil && d.Allowed {
		c.emit(ToolUpdated{ID: c.id, Status: ToolInProgress})
	}
	return d, err
}

func (c *callEnv) Progress(text string) {
	c.emit(ToolUpdated{ID: c.id, Progress: text})
}
