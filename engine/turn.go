package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mm-agent/mm/engine/compact"
	"github.com/mm-agent/mm/engine/detect"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/tools"
)

// Run plays one turn: the prompt, then model calls and tool calls until the
// model answers without calling a tool, a bound or a detector stops it, or
// ctx is cancelled. Every event goes to emit, in order, from this goroutine
// (tool progress may come from a tool's goroutine while this one waits).
// The returned TurnEnd is also the last event emitted.
//
// A panic inside the turn is recovered and reported as a failed turn, so
// mm keeps serving (ARCHITECTURE rule 7).
func (s *Session) Run(ctx context.Context, prompt string, emit func(Event)) TurnEnd {
	return s.RunSteered(ctx, prompt, nil, emit)
}

// RunSteered is Run with an inbox: what the user puts there while the
// turn runs joins the conversation before the next model call (steer.go).
// The inbox is closed when the turn ends; what it still held is dropped,
// with a note unless the turn was cancelled.
func (s *Session) RunSteered(ctx context.Context, prompt string, in *Inbox, emit func(Event)) (end TurnEnd) {
	defer in.Close() // also when the turn cannot start
	s.turn.Lock()
	defer s.turn.Unlock()
	release, refused := s.lease()
	if refused != "" {
		// Another mm holds or has moved on with this session: running
		// the turn here would lose one of the two (nothing is recorded).
		end = TurnEnd{Reason: Failed, Err: refused}
		s.locked(emit)(end)
		return end
	}
	defer release()
	t := &turn{s: s, in: in}
	t.emit = s.locked(func(e Event) { e = t.stamp(e); s.transcribe(e); emit(e) })
	s.begin(prompt)
	defer func() {
		if r := recover(); r != nil {
			s.opts.Logger.Error("turn panicked", "panic", r, "stack", string(debug.Stack()))
			end = TurnEnd{Reason: Failed, Err: fmt.Sprintf("internal error: %v (mm is still running; see the log)", r)}
		}
		end.Prompt, end.Completion, end.Cached = t.prompt, t.completion, t.cached
		t.dropped(end, in.Close())
		s.finish(end)
		s.ended()
		if t.noServer && !t.heard && !s.Stored() {
			// A first contact that reached no server: nothing worth
			// resuming, so nothing is stored or advertised.
			t.emit(end)
			return
		}
		if err := s.Save(); err != nil {
			// The turn still answers; the user learns why it will not
			// be there after a restart.
			s.opts.Logger.Warn("session not saved", "err", err)
			t.emit(Struggle{Level: Warning, Kind: "store", Text: "session not saved: " + err.Error()})
		}
		t.emit(end)
		s.spillMasked()
	}()
	if strings.TrimSpace(prompt) == "/compact" {
		return t.compactCommand(ctx)
	}
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
	in   *Inbox // what the user sends while the turn runs; nil: nothing

	prompt, completion, cached int

	calls       int            // tool calls answered in this turn
	budgetStep  int            // last reminder step reported
	broken      detect.Retries // broken calls, per generation
	textCalls   detect.Retries // calls written as text, in a row
	streamRetry bool           // the in-stream error retry was used
	warmer      bool           // the next call samples warmer
	gens        int            // model calls made in this turn
	overflows   int            // overflow recoveries in this turn
	cacheWarned bool           // the cache-drop warning was given
	noServer    bool           // a model call found no server listening
	heard       bool           // a model call answered
	// msg is the id of the assistant message being shown ("" until its
	// first piece): one per model call, under Session.emitMu.
	msg string
}

// stamp gives the pieces of text and reasoning the id of the message
// they belong to; a tool call ends the message. Called under emitMu.
func (t *turn) stamp(e Event) Event {
	switch v := e.(type) {
	case Text:
		v.Message = t.message()
		return v
	case Thought:
		v.Message = t.message()
		return v
	case Steered:
		v.Message = newMessageID() // the user's, not the assistant's
		t.msg = ""
		return v
	case ToolStarted:
		t.msg = ""
	}
	return e
}

func (t *turn) message() string {
	if t.msg == "" {
		t.msg = newMessageID()
	}
	return t.msg
}

// newMessage starts a new assistant message: the next model call's.
func (t *turn) newMessage() {
	t.s.emitMu.Lock()
	defer t.s.emitMu.Unlock()
	t.msg = ""
}

// newMessageID is a fresh message id, unique across sessions and
// restarts: a reloaded transcript keeps the ids it was shown with.
func newMessageID() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return "msg_" + hex.EncodeToString(b)
}

func (t *turn) run(ctx context.Context, prompt string) TurnEnd {
	s := t.s
	t.broken.Max, t.textCalls.Max = detect.MaxBrokenCallRetries, detect.MaxTextCallRetries
	s.reportTo(t.struggle)
	defer s.reportTo(nil)
	// A new user prompt is new intent: loops and the tool budget are
	// counted per turn, so reading the same file in six prompts is never
	// "stuck".
	s.loop().Reset()
	prompt, done := t.prepare(ctx, prompt)
	if done != nil {
		return *done
	}
	s.turnStarted(s.append(llm.Message{Role: llm.RoleUser, Content: s.userMessage(prompt)}))
	for step := 0; ; step++ {
		if step == s.opts.MaxTurns {
			return t.lastChance(ctx)
		}
		t.steer(ctx)
		g := t.generate(ctx, true)
		t.heard = t.heard || g.err == nil
		if ctx.Err() != nil {
			t.keepPartial(g.content)
			return TurnEnd{Reason: Cancelled}
		}
		switch {
		case g.refused != nil:
			if end, stop := t.refuse(g.content, g.refused); stop {
				return end
			}
			continue
		case g.runaway != nil:
			if end, stop := t.runaway(g); stop {
				return end
			}
			continue
		case g.textCall != nil:
			end, stop, converted := t.textCall(g)
			if stop {
				return end
			}
			if converted == nil {
				continue
			}
			g.resp.ToolCalls, g.content = converted, ""
		case g.err != nil:
			var fe *fitError
			if errors.As(g.err, &fe) {
				t.struggle(detect.ServerError(fe.line))
				return t.fail(fe.line)
			}
			if _, _, over := llm.ContextOverflow(g.err); over && strings.TrimSpace(g.content) == "" {
				// Overflow: shrink to fit and send again; not a step of the turn.
				if end, stop := t.overflow(ctx, g.err, true); stop {
					return end
				}
				step--
				continue
			}
			t.keepPartial(g.content)
			var se *llm.StreamError
			if errors.As(g.err, &se) && !t.streamRetry {
				// An error inside the stream: that one call once more;
				// the tools already run are not replayed.
				t.streamRetry = true
				t.struggle(detect.Struggle{Level: detect.Warning, Kind: detect.KindServerError, Text: "server error mid-stream — retrying that model call once"})
				continue
			}
			return t.serverError(g.err)
		}
		if len(g.resp.ToolCalls) == 0 {
			if t.lateErrors(ctx, g) || t.steerAtEnd(ctx, g) {
				continue
			}
			return t.answer(g)
		}
		if end, stop := t.toolCalls(ctx, g); stop {
			return end
		}
		if ctx.Err() != nil {
			return TurnEnd{Reason: Cancelled}
		}
	}
}

// answer stores a final text answer and ends the turn.
func (t *turn) answer(g generation) TurnEnd {
	msg := llm.Message{Role: llm.RoleAssistant, Content: g.content}
	if t.s.keepReasoning() {
		msg.Reasoning = g.resp.Reasoning
	}
	if g.resp.FinishReason == "length" {
		note := fmt.Sprintf("\n\n[answer cut off at max_tokens (%d) — raise sampling.max_tokens in the config]", t.s.opts.Sampling.MaxTokens)
		t.emit(Text{Text: note})
		msg.Content += note
		t.s.append(msg)
		return TurnEnd{Reason: MaxTokens}
	}
	t.s.append(msg)
	if strings.TrimSpace(msg.Content) == "" {
		t.struggle(detect.EmptyAnswer())
	}
	return TurnEnd{Reason: EndTurn}
}

// lateErrors is the end of a turn as a checkpoint: when an edit's check
// is still going on (a busy machine), the turn waits for it, bounded, and
// when it found new errors the answer is kept and the model is shown
// them, to fix them or say why not, instead of ending on a broken edit.
func (t *turn) lateErrors(ctx context.Context, g generation) bool {
	l := t.s.opts.Late
	if l == nil || !l.Pending() || g.resp.FinishReason == "length" {
		return false
	}
	t.struggle(detect.Struggle{Level: detect.Warning, Kind: "diagnostics", Text: "the last edit's check is not finished — waiting for it before ending the turn"})
	text := l.Checkpoint(ctx, lateBound)
	if text == "" || ctx.Err() != nil {
		return false
	}
	t.struggle(detect.Struggle{Level: detect.Warning, Kind: "diagnostics", Text: "the check found new errors — shown to the model before the turn ends"})
	msg := llm.Message{Role: llm.RoleAssistant, Content: g.content}
	if t.s.keepReasoning() {
		msg.Reasoning = g.resp.Reasoning
	}
	t.s.append(msg)
	t.s.append(llm.Message{Role: llm.RoleUser, Content: "[mm: " + text + "\nFix what your edit broke, or say why it is right.]"})
	return true
}

// lastChance: at maxTurns, one call without tools asking for a
// summary of what was done and what remains.
func (t *turn) lastChance(ctx context.Context) TurnEnd {
	s := t.s
	t.struggle(detect.MaxTurns(s.opts.MaxTurns))
	s.append(llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf(
		"[mm: you reached the limit of %d steps for this turn. Do not call tools. Say briefly what you did and what remains to do.]", s.opts.MaxTurns)})
	g := t.generate(ctx, false)
	if ctx.Err() != nil {
		t.keepPartial(g.content)
		return TurnEnd{Reason: Cancelled}
	}
	if g.err != nil {
		t.keepPartial(g.content)
		return TurnEnd{Reason: Failed, Err: s.opts.Explain(g.err)}
	}
	s.append(llm.Message{Role: llm.RoleAssistant, Content: g.content})
	return TurnEnd{Reason: MaxTurns}
}

// serverError ends the turn on a model-server failure with one line;
// a stall gets the watchdog's own struggle.
func (t *turn) serverError(err error) TurnEnd {
	line := t.s.opts.Explain(err)
	t.noServer = t.noServer || llm.Classify(err) == llm.ClassNoServer
	var stall *llm.StallError
	if errors.As(err, &stall) {
		t.struggle(detect.Stalled(stall.Timeout))
	} else {
		t.struggle(detect.ServerError(line))
	}
	return TurnEnd{Reason: Failed, Err: line}
}

// fail ends the turn with a severe struggle already reported.
func (t *turn) fail(line string) TurnEnd {
	return TurnEnd{Reason: Failed, Err: line}
}

// struggle forwards a detector's report as an event.
func (t *turn) struggle(g detect.Struggle) {
	lvl := Warning
	if g.Level == detect.Severe {
		lvl = Severe
	}
	t.emit(Struggle{Level: lvl, Kind: string(g.Kind), Text: g.Text})
}

// keepPartial stores what the model said before the stream broke, so the
// history holds the whole conversation of the turn.
func (t *turn) keepPartial(content string) {
	if strings.TrimSpace(content) != "" {
		t.s.append(llm.Message{Role: llm.RoleAssistant, Content: content})
	}
}

// refuse records a call stopped by its preflight: the generation was cut
// as soon as the path was known, the call enters history reduced to its
// path, and the refusal is its result.
func (t *turn) refuse(content string, r *refused) (TurnEnd, bool) {
	args, _ := json.Marshal(map[string]string{"path": r.path})
	return t.stopped(content, r.id, r.name, string(args), tools.Result{Text: r.text, IsError: true})
}

// runaway answers a call whose arguments ran away: it did not run;
// the model is told why and called again. The loop detector sees it, so a
// model that runs away again and again ends stuck.
func (t *turn) runaway(g generation) (TurnEnd, bool) {
	r := g.runaway
	t.struggle(r.r.Struggle(r.name))
	return t.stopped(g.content, r.id, r.name, reducedArgs(r.args), tools.Result{Text: r.r.Note(r.name), IsError: true})
}

// reducedArgs keeps the path of cut-off arguments, as valid JSON for the
// history (servers parse the arguments of past calls).
func reducedArgs(partial string) string {
	if path, ok := completePath(partial); ok && path != "" {
		b, _ := json.Marshal(map[string]string{"path": path})
		return string(b)
	}
	return "{}"
}

// stopped stores a call that a detector stopped before it ran, shows it as a
// failed call, and records it for the loop detector.
func (t *turn) stopped(content, callID, name, args string, res tools.Result) (TurnEnd, bool) {
	s := t.s
	if callID == "" {
		callID = s.nextCallID()
	}
	call := llm.ToolCall{ID: callID, Name: name, Arguments: args}
	s.append(llm.Message{Role: llm.RoleAssistant, Content: content, ToolCalls: []llm.ToolCall{call}})
	id := s.nextCallID()
	title, kind := name, tools.KindOther
	if tool, ok := s.opts.Tools.Lookup(name); ok {
		title, kind = tool.Describe(s.opts.Env, json.RawMessage(args)).Title, tool.Kind()
	}
	t.emit(ToolStarted{ID: id, Name: name, Title: title, Kind: kind, Input: json.RawMessage(args)})
	return t.answered(id, call, res)
}

// toolCalls stores the assistant message and answers each of its calls.
func (t *turn) toolCalls(ctx context.Context, g generation) (TurnEnd, bool) {
	s := t.s
	msg := llm.Message{Role: llm.RoleAssistant, Content: g.content, ToolCalls: g.resp.ToolCalls}
	if s.keepReasoning() {
		msg.Reasoning = g.resp.Reasoning
	}
	t.unhide(msg.ToolCalls)
	ts := s.toolset(true)
	broken := map[string]detect.ArgsCheck{}
	for i := range msg.ToolCalls {
		c := &msg.ToolCalls[i]
		if c.ID == "" {
			c.ID = s.nextCallID()
		}
		check := detect.CheckArgs(c.Arguments)
		if check.Status != detect.ArgsValid {
			// Arguments that are not JSON never enter history as they are:
			// servers parse the arguments of past calls.
			broken[c.ID] = check
			c.Arguments = reducedArgs(c.Arguments)
			continue
		}
		// Aliases translated; the history records the call as run.
		if r := ts.Resolve(c.Name, check.Args); !r.Unknown {
			c.Name, c.Arguments = r.Name, string(r.Args)
		}
	}
	if len(broken) == 0 {
		t.broken.Reset()
		t.textCalls.Reset()
	}
	s.append(msg)
	for i, c := range msg.ToolCalls {
		if ctx.Err() != nil {
			t.skipCalls(msg.ToolCalls[i:])
			return TurnEnd{Reason: Cancelled}, true
		}
		var end TurnEnd
		var stop bool
		if check, ok := broken[c.ID]; ok {
			end, stop = t.brokenCall(c, check)
		} else {
			end, stop = t.runTool(ctx, c, ts)
		}
		if stop {
			t.skipCalls(msg.ToolCalls[i+1:])
			return end, true
		}
	}
	return TurnEnd{}, false
}

// brokenCall answers a call whose arguments are not valid JSON: it
// never runs; the model gets a note (a character budget for a call cut at
// max_tokens) twice at most, then the turn ends with one Explain line.
func (t *turn) brokenCall(c llm.ToolCall, check detect.ArgsCheck) (TurnEnd, bool) {
	b := detect.BrokenCall{Tool: c.Name, Check: check, MaxTokens: t.s.opts.Sampling.MaxTokens}
	id := t.s.nextCallID()
	t.emit(ToolStarted{ID: id, Name: c.Name, Title: c.Name, Kind: t.kindOf(c.Name), Input: json.RawMessage(c.Arguments)})
	if !t.broken.Take() {
		t.struggle(b.Struggle(true))
		t.finish(id, c, tools.Result{Text: "[not run: " + b.Explain() + "]", IsError: true})
		return t.fail(b.Explain()), true
	}
	t.struggle(b.Struggle(false))
	return t.answered(id, c, tools.Result{Text: b.Note(), IsError: true})
}

func (t *turn) kindOf(name string) tools.Kind {
	if tool, ok := t.s.opts.Tools.Lookup(name); ok {
		return tool.Kind()
	}
	return tools.KindOther
}

// skipCalls answers the calls that did not run, so the history stays a
// valid conversation (every tool call has a result).
func (t *turn) skipCalls(calls []llm.ToolCall) {
	for _, c := range calls {
		t.s.append(llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, Content: "[not run: the turn ended before this call]"})
	}
}

// request builds the next request: one system message, then the history.
func (s *Session) request(withTools bool) llm.Request {
	msgs := append([]llm.Message{{Role: llm.RoleSystem, Content: s.opts.SystemPrompt}}, s.sendable()...)
	effort, kwargs := s.reasoning()
	req := llm.Request{
		Model:              s.Model(),
		Messages:           msgs,
		Sampling:           s.opts.Sampling,
		ReasoningEffort:    effort,
		ChatTemplateKwargs: kwargs,
		// llama.cpp then reports its prompt reading, which keeps the
		// watchdog fed and is shown; the client sends it to llama.cpp only.
		ReturnProgress: true,
	}
	if withTools {
		for _, tl := range s.offered() {
			req.Tools = append(req.Tools, llm.ToolDef{Name: tl.Name(), Description: tl.Description(), Parameters: tl.Schema()})
		}
	}
	return req
}

// runTool runs one call and stores its result in history.
func (t *turn) runTool(ctx context.Context, call llm.ToolCall, ts *detect.Toolset) (TurnEnd, bool) {
	s := t.s
	id := s.nextCallID()
	args := json.RawMessage(call.Arguments)
	tool, ok := s.opts.Tools.Lookup(call.Name)
	if !ok {
		t.emit(ToolStarted{ID: id, Name: call.Name, Title: call.Name, Kind: tools.KindOther, Input: args})
		t.struggle(detect.UnknownToolStruggle(call.Name))
		return t.answered(id, call, tools.Result{Text: ts.UnknownTool(call.Name), IsError: true})
	}
	desc := tool.Describe(s.opts.Env, args)
	t.emit(ToolStarted{ID: id, Name: call.Name, Title: desc.Title, Kind: tool.Kind(), Input: args, Locations: desc.Locations})
	pre, denied := t.preToolUse(ctx, call.Name, args)
	if denied != nil {
		return t.answered(id, call, *denied)
	}
	env := &callEnv{Env: s.opts.Env, id: id, tool: call.Name, emit: t.emit, hook: pre.hook}
	res, err := t.runWithHook(ctx, env, tool, desc, args)
	if err != nil {
		if ctx.Err() != nil {
			res = tools.Result{Text: "[not finished: the user cancelled the turn]", IsError: true}
			t.finish(id, call, res)
			return TurnEnd{Reason: Cancelled}, true
		}
		s.opts.Logger.Error("tool failed", "tool", call.Name, "err", err)
		res = tools.Errorf("[error: %s failed: %v]", call.Name, err)
	}
	return t.answered(id, call, t.postToolUse(ctx, call.Name, args, pre, res))
}

// answered records an answered call: the loop detector sees it as the tool
// produced it, its note (if any) is appended for the model, the user sees
// the result, and a stuck loop ends the turn.
func (t *turn) answered(id string, call llm.ToolCall, res tools.Result) (TurnEnd, bool) {
	t.calls++
	v := t.s.loop().Record(detect.ToolCall{Tool: call.Name, Input: call.Arguments, Output: res.Text, IsError: res.IsError})
	if v.Note != "" {
		res.Text = strings.TrimRight(res.Text, "\n") + "\n" + v.Note
		t.warmer = t.s.opts.AdaptiveTemperature
	}
	t.finish(id, call, res)
	if step := t.s.opts.budget().Step(t.calls); step > t.budgetStep {
		t.budgetStep = step
		t.struggle(t.s.opts.budget().Struggle(t.calls))
	}
	if v.Stuck() {
		return t.fail(strings.TrimPrefix(v.Err().Error(), "stuck: ") + " — the model is stuck; rephrase the request or try another approach"), true
	}
	return TurnEnd{}, false
}

func (t *turn) finish(id string, call llm.ToolCall, res tools.Result) {
	if l := t.s.opts.Late; l != nil {
		// An earlier edit's diagnostics that came after its result
		// (Take reads the files they are about, to drop stale ones).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if late := l.Take(ctx); late != "" {
			res.Text = late + "\n\n" + res.Text
		}
		cancel()
	}
	// One output never takes more than its share of the window, even
	// when the tool's own bound was set before the window was known.
	res.Text = compact.Cap(res.Text, t.s.maxOutput(context.Background()))
	status := ToolCompleted
	if res.IsError {
		status = ToolFailed
	}
	t.emit(ToolFinished{ID: id, Status: status, Result: res, Preview: preview(res.Text, t.s.opts.PreviewLines)})
	if res.Plan != nil {
		entries := make([]PlanEntry, len(res.Plan))
		for i, e := range res.Plan {
			entries[i] = PlanEntry{Content: e.Content, Status: e.Status}
		}
		t.emit(Plan{Entries: entries})
	}
	if res.Warning != "" {
		t.emit(Struggle{Level: Warning, Kind: "tool", Text: res.Warning})
	}
	t.s.append(llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: res.Text})
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
	tool string // the call's tool
	emit func(Event)
	hook tools.HookOpinion // the preToolUse hooks' allow or ask, for the Policy
}

// Approve carries the hooks' opinion only on the call's own approvals: a
// hook judged this call of this tool, not what another agent asked
// through it (ask_<name>) does under it — that one goes to the user.
func (c *callEnv) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	req.CallID, req.Hook = c.id, ""
	if req.Tool == c.tool {
		req.Hook = c.hook
	}
	d, err := c.Env.Approve(ctx, req)
	if err == nil && d.Allowed {
		c.emit(ToolUpdated{ID: c.id, Status: ToolInProgress})
	}
	return d, err
}

func (c *callEnv) Progress(text string) {
	c.emit(ToolUpdated{ID: c.id, Progress: text})
}

// RunInTerminal forwards to the front end's terminals (tools.Terminals)
// with the call's id, so the terminal shows in this call.
func (c *callEnv) RunInTerminal(ctx context.Context, cmd tools.Command) (tools.Exit, error) {
	t, ok := c.Env.(tools.Terminals)
	if !ok {
		return tools.Exit{}, tools.ErrNoTerminal
	}
	cmd.CallID = c.id
	return t.RunInTerminal(ctx, cmd)
}
