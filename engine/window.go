package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/mm-agent/mm/engine/compact"
	"github.com/mm-agent/mm/engine/detect"
	"github.com/mm-agent/mm/engine/llm"
)

// ContextOptions configure context budgeting. Zero values are
// the defaults.
type ContextOptions struct {
	// Off turns masking and compaction off (context.enabled: false). The
	// overflow recovery still runs: a refused request is never the end.
	Off bool
	// KeepLastTurns stay intact when old turns are summarised; 0 means 4.
	KeepLastTurns int
	// MaskAfterTurns: tool outputs older than this many turns become
	// one-line stubs in what is sent; 0 means 3.
	MaskAfterTurns int
	// SummaryMaxTokens bounds the summary call's answer; 0 means 800.
	SummaryMaxTokens int
	// MaxOutput bounds one tool output in characters; 0 derives it from
	// the window (15 % of it, clamped to [2,000, 16,000]).
	MaxOutput int
	// MaskEveryTurn is the other masking policy, kept for the benchmark:
	// mask as soon as an output is MaskAfterTurns turns old, at every
	// turn (each turn breaks the server's cached prefix), instead of in
	// steps when the estimate passes a threshold (the default).
	MaskEveryTurn bool
}

func (o ContextOptions) keep() int      { return pos(o.KeepLastTurns, 4) }
func (o ContextOptions) maskAfter() int { return pos(o.MaskAfterTurns, 3) }
func (o ContextOptions) summaryMax() int {
	return pos(o.SummaryMaxTokens, 800)
}

func pos(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Thresholds, as shares of the room a prompt may take (the window less
// the room kept for the answer).
const (
	actAt      = 0.80 // past this, a step is taken before the request
	maskGoal   = 0.60 // a masking step aims under this
	overflowAt = 0.60 // after an overflow error, aim at 60 % of the real window
	maxRetries = 2    // overflow recoveries per turn
)

// ctxState is the session's context bookkeeping, guarded by Session.mu.
type ctxState struct {
	// starts holds the history index of each turn's prompt.
	starts []int
	// maskBefore: tool outputs before this history index are sent as
	// stubs. It only moves at a step, so the prefix stays byte-identical
	// between two steps.
	maskBefore int
	// caps bound what is sent of some outputs (shrink-to-fit), by history
	// index.
	caps map[int]int
	// spilled are the masked outputs kept in the spill file (spill.go),
	// by history index: the history holds their stub.
	spilled map[int]spillRef
	// learnt is the window read from an overflow error: it
	// replaces a wrong configured or probed one for the session.
	learnt int
	// ratio is the server's tokens per estimated token, from the last
	// request (≥ 1 once it counted more than mm estimated).
	ratio float64
	// reportsCached: the server reported cached tokens at least once.
	reportsCached bool
	// lastPrompt is the prompt tokens of the last request: what the
	// server's cache holds for the next one.
	lastPrompt int
	// expectBreak: the next request's prefix changed on purpose (a step,
	// a summary call); its cache drop is not a warning.
	expectBreak bool
	// windowNoted: the "window unknown" note was given this session.
	windowNoted bool
	// Steps counts the steps taken (masking, compaction, shrink).
	steps int
	// compactFailedAt is the number of turns when an automatic
	// compaction last failed (0: none since the last success). The next
	// try waits until the conversation has doubled: a failed summary
	// costs a full prompt read on a small local model, and retrying it
	// before every call (as mm once did) made each later turn read the
	// whole conversation three times.
	compactFailedAt int
	// compactFailNoted: the user was told a compaction failed.
	compactFailNoted bool
}

// restart finds the turn boundaries of a history put back (a loaded
// session); nothing is masked until the next step.
func (c *ctxState) restart(h []llm.Message) {
	c.starts, c.maskBefore, c.caps, c.spilled = nil, 0, nil, nil
	for i, m := range h {
		if isPrompt(m) {
			c.starts = append(c.starts, i)
		}
	}
}

// ContextStep reports that mm changed what it sends to fit the window: a
// masking step, a compaction or a shrink-to-fit. Front ends show the new
// size (ACP usage_update).
type ContextStep struct {
	// Step is "masked", "compacted" or "shrunk".
	Step string
	// Before and After are the estimated prompt tokens; Size is the
	// window.
	Before, After, Size int
	// Turns is how many turns were masked or summarised.
	Turns int
}

func (ContextStep) event() {}

// window is the context window: the one learnt from an overflow error,
// else the configured or probed one, 0 when unknown.
func (s *Session) window(ctx context.Context) int {
	s.mu.Lock()
	learnt := s.cs.learnt
	s.mu.Unlock()
	if learnt > 0 {
		return learnt
	}
	if s.opts.ContextWindow == nil {
		return 0
	}
	return s.opts.ContextWindow(context.WithoutCancel(ctx))
}

// reserve is the room kept for the answer: max_tokens, at most a quarter
// of the window.
func (s *Session) reserve(window int) int {
	mt := s.opts.Sampling.MaxTokens
	if mt <= 0 {
		mt = 4096
	}
	return min(mt, window/4)
}

// maxOutput bounds one tool output in characters: the config's, else
// the default for the window.
func (s *Session) maxOutput(ctx context.Context) int {
	if s.opts.Context.MaxOutput > 0 {
		return s.opts.Context.MaxOutput
	}
	return compact.MaxOutput(s.window(ctx))
}

// estimate is the prompt tokens of req: the local count, scaled up when
// the server counted more than mm estimated last time: the larger of the
// local estimate and the server's count is the safe one.
func (s *Session) estimate(req llm.Request) int {
	n := compact.RequestTokens(req)
	s.mu.Lock()
	r := s.cs.ratio
	s.mu.Unlock()
	if r > 1 {
		n = int(float64(n) * min(r, 3))
	}
	return n
}

// calibrate learns the server's tokens per estimated token.
func (s *Session) calibrate(req llm.Request, promptTokens int) {
	local := compact.RequestTokens(req)
	if local == 0 || promptTokens == 0 {
		return
	}
	s.mu.Lock()
	s.cs.ratio = float64(promptTokens) / float64(local)
	s.mu.Unlock()
}

// sendable is the history as it is sent: outputs before maskBefore as
// stubs, capped outputs cut. The stored history is never changed.
func (s *Session) sendable() []llm.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]llm.Message, len(s.history))
	calls := map[string]llm.ToolCall{}
	for i, m := range s.history {
		for _, c := range m.ToolCalls {
			calls[c.ID] = c
		}
		if _, ok := s.cs.spilled[i]; ok {
			// Its stub already.
		} else if m.Role == llm.RoleTool {
			if i < s.cs.maskBefore && compact.Worth(m.Content) {
				m.Content = compact.Stub(calls[m.ToolCallID], m.Content)
			} else if n, ok := s.cs.caps[i]; ok {
				m.Content = compact.Cap(m.Content, n)
			}
		}
		out[i] = m
	}
	return out
}

// turnStarted records the start of a turn's prompt in history; with the
// every-turn policy it also masks what has just become old.
func (s *Session) turnStarted(index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cs.starts = append(s.cs.starts, index)
	if s.opts.Context.MaskEveryTurn && !s.opts.Context.Off {
		if n := len(s.cs.starts) - s.opts.Context.maskAfter(); n > 0 && s.cs.starts[n] > s.cs.maskBefore {
			s.cs.maskBefore = s.cs.starts[n]
			s.cs.steps++
			s.cs.expectBreak = true
		}
	}
}

// fitError is a request mm will not send: the window cannot hold even
// the fixed prompt.
type fitError struct{ line string }

func (e *fitError) Error() string { return e.line }

// fit makes the next request fit the window before it is sent,
// in steps from the least to the most destructive: mask old outputs, mask
// all but this turn's, summarise old turns, cut this turn's outputs.
// target, when set, is the size to reach after an overflow error; else a
// step is taken only past actAt of the room. It returns a *fitError when
// the window is smaller than the fixed prompt.
func (t *turn) fit(ctx context.Context, withTools bool, target int) error {
	s := t.s
	w := s.window(ctx)
	if w <= 0 {
		if target == 0 {
			t.fitByCount(ctx)
		}
		return nil
	}
	room := w - s.reserve(w)
	fixed := s.estimate(s.bare(withTools))
	if fixed >= room {
		return &fitError{line: fmt.Sprintf("the model's context window (%s tokens) is too small for mm's fixed prompt (≈%s tokens) and an answer: start the server with a larger context (llama-server -c %d, Ollama num_ctx), or set sampling.max_tokens lower",
			compact.Thousands(w), compact.Thousands(fixed), nextPow2(4*(fixed+512)))}
	}
	hi, goal := int(actAt*float64(room)), int(maskGoal*float64(room))
	if target > 0 {
		hi, goal = min(target, room), min(target, room)
	}
	size := func() int { return s.estimate(s.request(withTools)) }
	before := size()
	if before <= hi {
		return nil
	}
	mid := t.gens > 0 || target > 0
	after, last := before, ""
	done := func(step string, turns int) {
		now := size()
		s.mu.Lock()
		s.cs.steps++
		s.cs.expectBreak = true
		s.mu.Unlock()
		s.opts.Logger.Info("context step", "step", step, "before", after, "after", now, "window", w, "turns", turns, "mid_turn", mid)
		t.emit(ContextStep{Step: step, Before: after, After: now, Size: w, Turns: turns})
		after, last = now, step
	}
	if !s.opts.Context.Off {
		// 1. Mask what is older than maskAfterTurns, then, if that is not
		// enough, everything but this turn's outputs: one step each time.
		for _, n := range []int{s.opts.Context.maskAfter(), 1} {
			if m := s.maskOlderThan(n); m > 0 {
				done("masked", m)
				if after <= goal {
					break
				}
			}
		}
		// 2. When masking cannot reach the goal, what is left is the
		// conversation itself: summarise old turns, then all but this one.
		if after > goal {
			for _, keep := range []int{s.opts.Context.keep(), 1} {
				n, ok := t.autoCompact(ctx, keep, hi)
				if !ok {
					break
				}
				if n > 0 {
					done("compacted", n)
					if after <= hi {
						break
					}
				}
			}
		}
	}
	// 3. Cut this turn's outputs until the request fits.
	if after > hi && s.shrink(size, hi) {
		done("shrunk", 0)
	}
	if mid && target == 0 && (last == "compacted" || last == "shrunk") {
		// mm made room on its own and the turn goes on: news, not a
		// warning — nothing here is for the user to fix.
		t.emit(Struggle{Level: Info, Kind: "context", Text: fmt.Sprintf("context %d%% full — %s %s → %s tokens to go on",
			min(999, before*100/w), stepWords(last), compact.Thousands(before), compact.Thousands(after))})
	}
	return nil
}

func stepWords(step string) string {
	if step == "compacted" {
		return "summarised earlier turns,"
	}
	return "cut this turn's outputs,"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func nextPow2(n int) int {
	p := 1024
	for p < n {
		p *= 2
	}
	return p
}

// fitByCount is the fallback when the window is unknown: mask in
// steps by turn count, summarise past 4× keepLastTurns turns.
func (t *turn) fitByCount(ctx context.Context) {
	s := t.s
	if s.opts.Context.Off {
		return
	}
	o := s.opts.Context
	s.mu.Lock()
	turns := len(s.cs.starts)
	unmasked := 0
	for _, st := range s.cs.starts {
		if st >= s.cs.maskBefore {
			unmasked++
		}
	}
	s.mu.Unlock()
	before := s.estimate(s.request(true))
	step := func(name string, n int) {
		after := s.estimate(s.request(true))
		s.mu.Lock()
		s.cs.steps++
		s.cs.expectBreak = true
		s.mu.Unlock()
		s.opts.Logger.Info("context step (window unknown)", "step", name, "before", before, "after", after, "turns", n)
		t.emit(ContextStep{Step: name, Before: before, After: after, Turns: n})
		before = after
	}
	if unmasked > 2*o.maskAfter() {
		if n := s.maskOlderThan(o.maskAfter()); n > 0 {
			step("masked", n)
		}
	}
	if turns > 4*o.keep() {
		if n, ok := t.autoCompact(ctx, o.keep(), 0); !ok {
			// No summary to be had for now: what is left to cut is the
			// outputs of earlier turns.
			if n := s.maskOlderThan(1); n > 0 {
				step("masked", n)
			}
		} else if n > 0 {
			step("compacted", n)
		}
	}
}

// autoCompact is compaction mm decides on its own (not /compact). After a
// failure it is not tried again until the conversation has twice the
// turns it had then; the first failure is told to the user, later ones
// only logged. ok is false when it failed or was not tried.
func (t *turn) autoCompact(ctx context.Context, keep, budget int) (n int, ok bool) {
	s := t.s
	s.mu.Lock()
	turns, failedAt, noted := len(s.cs.starts), s.cs.compactFailedAt, s.cs.compactFailNoted
	s.mu.Unlock()
	if failedAt > 0 && turns < 2*failedAt {
		return 0, false
	}
	n, err := t.compactTurns(ctx, keep, budget)
	if err != nil && ctx.Err() != nil {
		return 0, false // cancelled: not the summary's failure
	}
	s.mu.Lock()
	if err != nil {
		s.cs.compactFailedAt, s.cs.compactFailNoted = max(turns, 1), true
	} else if n > 0 {
		s.cs.compactFailedAt = 0
	}
	s.mu.Unlock()
	if err == nil {
		return n, true
	}
	s.opts.Logger.Info("compaction failed", "err", err, "turns", turns, "retry_at_turns", 2*max(turns, 1))
	if !noted {
		t.struggle(detect.Struggle{Level: detect.Warning, Kind: "context", Text: fmt.Sprintf(
			"compaction failed: %s — the conversation is kept as it was; mm masks old tool outputs instead and tries again once the conversation has doubled (turn %d)", err, 2*max(turns, 1))})
	}
	return 0, false
}

// maskOlderThan moves the mask to the start of the turn n back (the
// current one counts as 1) and says how many turns it newly masked.
func (s *Session) maskOlderThan(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := len(s.cs.starts) - n
	if k <= 0 || s.cs.starts[k] <= s.cs.maskBefore {
		return 0
	}
	masked := 0
	for _, st := range s.cs.starts[:k] {
		if st >= s.cs.maskBefore {
			masked++
		}
	}
	s.cs.maskBefore = s.cs.starts[k]
	return masked
}

// shrink cuts the outputs of the current turn, largest first, until size
// is within goal; it says whether it cut anything.
func (s *Session) shrink(size func() int, goal int) bool {
	cut := false
	for range 8 {
		s.mu.Lock()
		from := 0
		if n := len(s.cs.starts); n > 0 {
			from = s.cs.starts[n-1]
		}
		big, bigLen := -1, 0
		for i := from; i < len(s.history); i++ {
			m := s.history[i]
			if m.Role != llm.RoleTool {
				continue
			}
			l := len(m.Content)
			if c, ok := s.cs.caps[i]; ok {
				l = min(l, c)
			}
			if l > bigLen && l > 600 {
				big, bigLen = i, l
			}
		}
		if big < 0 {
			s.mu.Unlock()
			return cut
		}
		if s.cs.caps == nil {
			s.cs.caps = map[int]int{}
		}
		s.cs.caps[big] = max(500, bigLen/2)
		s.mu.Unlock()
		cut = true
		if size() <= goal {
			return true
		}
	}
	return cut
}

// compactTurns summarises every turn but the last keep ones into one
// block at the head of the conversation and says how many turns it
// summarised; 0 when there is nothing to summarise. budget bounds the
// summary request (0: unknown window). On failure the history is left
// exactly as it was.
func (t *turn) compactTurns(ctx context.Context, keep, budget int) (int, error) {
	s := t.s
	s.mu.Lock()
	if len(s.cs.starts) <= keep {
		s.mu.Unlock()
		return 0, nil
	}
	k := len(s.cs.starts) - keep
	cut := s.cs.starts[k]
	old := s.wholeLocked(append([]llm.Message(nil), s.history[:cut]...), 0)
	s.mu.Unlock()

	header := s.header()
	previous := ""
	if len(old) > 0 {
		if sum, _, ok := compact.SplitBlock(old[0].Content); ok {
			previous = sum
		}
	}
	maxChars := 24000
	if budget > 0 {
		maxChars = max(2000, int(float64(budget-s.opts.Context.summaryMax()-400)*compact.CharsPerToken*0.9))
	}
	transcript := compact.Transcript(stripHeader(old, header), 1200, maxChars)
	t.emit(Progress{Text: fmt.Sprintf("Compacting the conversation: summarising %d earlier turn%s…", k, plural(k))})
	c := Compaction{ID: compactionID(), Status: CompactionInProgress, Before: s.estimate(s.request(true))}
	t.emit(c)
	summary, err := t.summarise(ctx, compact.SummaryRequest(previous, transcript))
	if err == nil {
		err = s.replaceTurns(header, summary, cut, k, keep)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		c.Status = CompactionCancelled
	case err != nil:
		c.Status, c.Err = CompactionFailed, err.Error()
	default:
		c.Status, c.Summary, c.Turns, c.After = CompactionCompleted, summary, k, s.estimate(s.request(true))
	}
	t.emit(c)
	if err != nil {
		return 0, err
	}
	return k, nil
}

// compactionID names a compaction, unique within its session.
func compactionID() string {
	var b [8]byte
	rand.Read(b[:])
	return "compaction_" + hex.EncodeToString(b[:])
}

// replaceTurns puts summary in place of the k turns before history[cut]
// (the turns left are keep), unless the conversation changed meanwhile.
func (s *Session) replaceTurns(header, summary string, cut, k, keep int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) < cut || len(s.cs.starts) <= k || s.cs.starts[k] != cut {
		return errors.New("the conversation changed during the summary")
	}
	first := s.history[cut]
	_, rest, _ := compact.SplitBlock(strings.TrimPrefix(first.Content, header))
	first.Content = header + compact.Block(summary) + strings.TrimPrefix(rest, "\n")
	h := append([]llm.Message{first}, s.history[cut+1:]...)
	s.history = h
	s.histGen++
	starts := make([]int, 0, keep)
	for _, st := range s.cs.starts[k:] {
		starts = append(starts, st-cut)
	}
	s.cs.starts = starts
	s.cs.maskBefore = max(0, s.cs.maskBefore-cut)
	if len(s.cs.caps) > 0 {
		caps := map[int]int{}
		for i, c := range s.cs.caps {
			if i >= cut {
				caps[i-cut] = c
			}
		}
		s.cs.caps = caps
	}
	if len(s.cs.spilled) > 0 {
		spilled := map[int]spillRef{}
		for i, r := range s.cs.spilled {
			if i >= cut {
				spilled[i-cut] = r
			}
		}
		s.cs.spilled = spilled
	}
	s.cs.expectBreak = true
	return nil
}

// stripHeader drops the workspace header from the first message, so the
// summary is not asked to repeat it.
func stripHeader(msgs []llm.Message, header string) []llm.Message {
	if len(msgs) == 0 || header == "" {
		return msgs
	}
	out := append([]llm.Message(nil), msgs...)
	out[0].Content = strings.TrimPrefix(out[0].Content, header)
	return out
}

// summarise is the summary call: no tools, no thinking where the server
// allows turning it off, a doubled watchdog, summaryMaxTokens. An
// empty answer is a failure: nothing is replaced by nothing.
func (t *turn) summarise(ctx context.Context, user string) (string, error) {
	s := t.s
	kwargs := map[string]any{"enable_thinking": false}
	for k, v := range s.opts.ChatTemplateKwargs {
		if k != "enable_thinking" {
			kwargs[k] = v
		}
	}
	sampling := s.opts.Sampling
	sampling.MaxTokens = s.opts.Context.summaryMax()
	sampling.ParallelToolCalls = nil
	req := llm.Request{
		Model:              s.Model(),
		Messages:           []llm.Message{{Role: llm.RoleSystem, Content: compact.SummarySystem}, {Role: llm.RoleUser, Content: user}},
		Sampling:           sampling,
		ChatTemplateKwargs: kwargs,
		ReturnProgress:     true,
		WatchdogScale:      2,
	}
	think := detect.NewThinkFilter(detect.ThinkOptions{})
	var b strings.Builder
	keep := func(segs []detect.Segment) {
		for _, seg := range segs {
			if !seg.Reasoning {
				b.WriteString(seg.Text)
			}
		}
	}
	resp, err := s.opts.Model.Stream(ctx, req, func(d llm.Delta) error {
		switch {
		case d.Content != "":
			keep(think.Write(d.Content))
		case d.Progress != nil:
			t.emit(Progress{Text: progressLine(d.Progress)})
		}
		return nil
	})
	keep(think.Flush())
	t.prompt += resp.Usage.PromptTokens
	t.completion += resp.Usage.CompletionTokens
	t.cached += resp.Usage.CachedTokens
	if resp.HasUsage {
		s.addTotals(resp.Usage)
	}
	s.mu.Lock()
	s.cs.expectBreak = true
	s.mu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", errors.New(s.opts.Explain(err))
	}
	summary := strings.TrimSpace(b.String())
	if summary == "" {
		return "", errors.New("the model wrote an empty summary")
	}
	return summary, nil
}

// bare is the request without any history: what every request costs.
func (s *Session) bare(withTools bool) llm.Request {
	req := s.request(withTools)
	req.Messages = req.Messages[:1]
	return req
}

// overflow recovers from the server's "prompt too long": the real
// window read from the error replaces the known one for the session, and
// the next request aims at 60 % of it. Two tries a turn, then one line.
func (t *turn) overflow(ctx context.Context, err error, withTools bool) (TurnEnd, bool) {
	s := t.s
	nPrompt, nCtx, _ := llm.ContextOverflow(err)
	t.overflows++
	if t.overflows > maxRetries {
		w := s.window(ctx)
		line := fmt.Sprintf("the conversation does not fit the model's context window (%s tokens) even after mm shrank it twice: start the server with a larger context (llama-server -c %d), or start a new session", compact.Thousands(w), nextPow2(2*max(w, 1)))
		t.struggle(detect.ServerError(line))
		return t.fail(line), true
	}
	was := s.window(ctx)
	if nCtx > 0 {
		s.mu.Lock()
		s.cs.learnt = nCtx
		s.mu.Unlock()
		if s.opts.LearnWindow != nil {
			s.opts.LearnWindow(nCtx)
		}
	}
	req := s.request(withTools)
	if nPrompt > 0 {
		// The server counts more than mm estimated: learn by how much.
		s.calibrate(req, nPrompt)
	}
	w := s.window(ctx)
	base := w
	if base <= 0 {
		base = max(nPrompt, s.estimate(req))
	}
	target := int(overflowAt * float64(base))
	if nCtx > 0 && was > 0 && was != nCtx {
		s.opts.Logger.Info("context window corrected from the server's error", "was", was, "now", nCtx)
	}
	if ferr := t.fit(ctx, withTools, target); ferr != nil {
		var fe *fitError
		if errors.As(ferr, &fe) {
			t.struggle(detect.ServerError(fe.line))
			return t.fail(fe.line), true
		}
	}
	window := "the server refused the prompt as too long"
	if nCtx > 0 {
		window = fmt.Sprintf("the server's window is %s tokens", compact.Thousands(nCtx))
		if was > 0 && was != nCtx {
			window += fmt.Sprintf(" (not %s)", compact.Thousands(was))
		}
	}
	// Recovered: the request was sent again and the turn goes on, so the
	// note is news (Info); a wrong configured window is in its text.
	t.emit(Struggle{Level: Info, Kind: "context", Text: fmt.Sprintf("context overflow: %s — mm shrank the conversation to ≈%s tokens and sent it again",
		window, compact.Thousands(s.estimate(s.request(withTools))))})
	return TurnEnd{}, false
}

// compactCommand is /compact (ACP prompt text and line mode): everything
// but the last turn is summarised now, whatever the thresholds say, and
// the reply says what it freed.
func (t *turn) compactCommand(ctx context.Context) TurnEnd {
	s := t.s
	before := s.estimate(s.request(true))
	s.mu.Lock()
	turns := len(s.cs.starts)
	s.mu.Unlock()
	if turns < 2 {
		t.emit(Text{Text: fmt.Sprintf("nothing to compact yet: the conversation has %d turn%s, and the last one is always kept", turns, plural(turns))})
		return TurnEnd{Reason: EndTurn}
	}
	n, err := t.compactTurns(ctx, 1, s.roomOf(ctx))
	if err != nil {
		if ctx.Err() != nil {
			return TurnEnd{Reason: Cancelled}
		}
		line := "compaction failed: " + err.Error() + " — the conversation is kept as it was"
		t.struggle(detect.Struggle{Level: detect.Warning, Kind: "context", Text: line})
		t.emit(Text{Text: line})
		return TurnEnd{Reason: EndTurn}
	}
	after := s.estimate(s.request(true))
	w := s.window(ctx)
	s.mu.Lock()
	s.cs.steps++
	s.cs.compactFailedAt = 0
	s.mu.Unlock()
	t.emit(ContextStep{Step: "compacted", Before: before, After: after, Size: w, Turns: n})
	t.emit(Text{Text: fmt.Sprintf("compacted: %s → %s tokens (%d earlier turn%s summarised; the last one kept as it was)",
		compact.Thousands(before), compact.Thousands(after), n, plural(n))})
	t.emit(Usage{Used: after, Size: w})
	return TurnEnd{Reason: EndTurn}
}

// roomOf is the room a prompt may take, 0 when the window is unknown.
func (s *Session) roomOf(ctx context.Context) int {
	w := s.window(ctx)
	if w <= 0 {
		return 0
	}
	return w - s.reserve(w)
}

// cacheCheck warns once a turn when the server re-read most of a prompt
// whose prefix mm kept stable: the cached tokens fell below half of
// what the previous request had put in the cache. (Against the whole
// prompt, every large tool output would look like a broken prefix.)
func (t *turn) cacheCheck(u llm.Usage) {
	s := t.s
	s.mu.Lock()
	if u.CachedTokens > 0 {
		s.cs.reportsCached = true
	}
	expected, reports, prev := s.cs.expectBreak, s.cs.reportsCached, s.cs.lastPrompt
	s.cs.expectBreak, s.cs.lastPrompt = false, u.PromptTokens
	s.mu.Unlock()
	if expected || !reports || t.cacheWarned || prev < 1024 || 2*u.CachedTokens >= prev {
		return
	}
	t.cacheWarned = true
	t.struggle(detect.Struggle{Level: detect.Warning, Kind: "cache", Text: fmt.Sprintf("prompt cache: only %s of the %s tokens already read were reused — the server read them again (another client on the same slot, or the prefix changed)",
		compact.Thousands(u.CachedTokens), compact.Thousands(prev))})
}

// isPrompt tells a user's prompt from mm's own notes (which also go as
// user messages): turn boundaries of a loaded history.
func isPrompt(m llm.Message) bool {
	return m.Role == llm.RoleUser && !strings.HasPrefix(m.Content, "[error: you wrote a tool call as text") &&
		!strings.HasPrefix(m.Content, "[mm: you reached the limit of")
}
