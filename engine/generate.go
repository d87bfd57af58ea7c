package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mm-agent/mm/engine/detect"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/tools"
)

// generation is one model call as the turn sees it once the detectors had
// their say.
type generation struct {
	resp llm.Response
	// content is what the user was shown: the answer without <think>
	// blocks and without a tool call written as text.
	content string
	// At most one of the following is set when the stream was cut or
	// ended on something other than an answer or real tool calls.
	textCall *detect.TextCall
	refused  *refused
	runaway  *runawayStop
	err      error
}

// runawayStop stops the stream when a call's arguments run away.
type runawayStop struct {
	index int
	id    string
	name  string
	args  string // what had streamed
	r     *detect.Runaway
}

func (r *runawayStop) Error() string { return "runaway arguments in " + r.name }

// textCallStop stops the stream when the model writes a tool call as text.
type textCallStop struct{ call *detect.TextCall }

func (t *textCallStop) Error() string { return "tool call written as text" }

// generate streams one model call through the detectors: <think> routing,
// text-written tool calls, runaway arguments and the
// write preflight. Text reaches the user as it is decided.
func (t *turn) generate(ctx context.Context, withTools bool) generation {
	s := t.s
	if err := t.fit(ctx, withTools, 0); err != nil {
		return generation{err: err}
	}
	if ctx.Err() != nil {
		return generation{err: ctx.Err()}
	}
	req := s.request(withTools)
	t.newMessage()
	if withTools {
		if note := s.opts.budget().Reminder(t.calls); note != "" && len(req.Messages) > 1 {
			// The tool budget's reminder goes at the end of what is sent,
			// never in history, so the cached prefix stays intact.
			last := &req.Messages[len(req.Messages)-1]
			last.Content += "\n\n" + note
		}
	}
	if t.warmer {
		// Adaptive temperature: one call warmer after a loop warning, then back.
		warm := 0.4
		req.Sampling.Temperature, t.warmer = &warm, false
	}
	ts := s.toolset(withTools)
	var (
		g       generation
		shown   strings.Builder
		thought strings.Builder // the reasoning, to find a call written there
		think   = detect.NewThinkFilter(detect.ThinkOptions{})
		calls   = detect.NewTextCallDetector(ts, detect.TextCallOptions{})
		pf      = newPreflight(s.opts.Tools, s.opts.Env)
		runaway = map[int]*detect.RunawayDetector{}
	)
	text := func(segs []detect.Segment) error {
		for _, seg := range segs {
			if seg.Reasoning {
				thought.WriteString(seg.Text)
				t.emit(Thought{Text: seg.Text})
				continue
			}
			show, call := calls.Write(seg.Text)
			if show != "" {
				shown.WriteString(show)
				t.emit(Text{Text: show})
			}
			if call != nil {
				return &textCallStop{call: call}
			}
		}
		return nil
	}
	resp, err := s.opts.Model.Stream(ctx, req, func(d llm.Delta) error {
		switch {
		case d.Content != "":
			return text(think.Write(d.Content))
		case d.Reasoning != "":
			thought.WriteString(d.Reasoning)
			t.emit(Thought{Text: d.Reasoning})
		case d.Progress != nil:
			t.emit(Progress{Text: progressLine(d.Progress)})
		case d.ToolCall != nil && withTools:
			calls.Structured() // a structured call wins over leaked markup
			if err := pf.feed(ctx, d.ToolCall); err != nil {
				return err
			}
			rd := runaway[d.ToolCall.Index]
			if rd == nil {
				rd = detect.NewRunawayDetector(detect.RunawayOptions{})
				runaway[d.ToolCall.Index] = rd
			}
			if r := rd.Write(d.ToolCall.Args); r != nil {
				c := pf.calls[d.ToolCall.Index]
				return &runawayStop{index: d.ToolCall.Index, id: c.id, name: c.name, args: c.args.String(), r: r}
			}
		}
		return nil
	})
	if err == nil {
		// The stream ended: release what the filters held back.
		err = text(think.Flush())
		if err == nil {
			show, call := calls.Flush()
			if show != "" {
				shown.WriteString(show)
				t.emit(Text{Text: show})
			}
			if call != nil {
				err = &textCallStop{call: call}
			}
		}
	}
	if err == nil && withTools && len(resp.ToolCalls) == 0 && strings.TrimSpace(shown.String()) == "" {
		// Nothing answered, nothing called: a call written inside the
		// reasoning goes back to the model instead of ending the turn empty.
		if c := detect.ReasoningCall(thought.String(), ts); c != nil {
			err = &textCallStop{call: c}
		}
	}
	t.gens++
	t.count(ctx, req, resp, err)
	g.resp, g.content = resp, shown.String()
	var (
		tc *textCallStop
		rs *runawayStop
		rf *refused
	)
	switch {
	case errors.As(err, &tc):
		g.textCall = tc.call
	case errors.As(err, &rs):
		g.runaway = rs
	case errors.As(err, &rf):
		g.refused = rf
	default:
		g.err = err
	}
	if !withTools {
		// A call offered no tools (the last-chance and summary calls) runs
		// none, whatever the server parsed as one.
		g.resp.ToolCalls = nil
	}
	return g
}

// count adds the call's usage to the turn and reports it.
func (t *turn) count(ctx context.Context, req llm.Request, resp llm.Response, err error) {
	t.prompt += resp.Usage.PromptTokens
	t.completion += resp.Usage.CompletionTokens
	t.cached += resp.Usage.CachedTokens
	if err != nil || !resp.HasUsage {
		return
	}
	t.s.addTotals(resp.Usage)
	t.s.calibrate(req, resp.Usage.PromptTokens)
	t.cacheCheck(resp.Usage)
	size := t.s.window(ctx)
	t.windowNote(size)
	t.emit(Usage{
		Used:   resp.Usage.PromptTokens + resp.Usage.CompletionTokens,
		Size:   size,
		Prompt: resp.Usage.PromptTokens, Completion: resp.Usage.CompletionTokens, Cached: resp.Usage.CachedTokens,
	})
}

// windowNote tells the user, once per session, that the window is
// unknown and what that costs: budgeting by count, overflows found only
// when the server refuses.
func (t *turn) windowNote(size int) {
	s := t.s
	if size > 0 || s.opts.WindowUnknown == nil || s.opts.Context.Off || !s.opts.WindowUnknown() {
		return
	}
	s.mu.Lock()
	noted := s.cs.windowNoted
	s.cs.windowNoted = true
	s.mu.Unlock()
	if !noted {
		t.struggle(detect.Struggle{Level: detect.Warning, Kind: "context", Text: "context window unknown: the server does not say it — set contextWindow in the config (until then old tool outputs are masked by count, and an overflow is seen only when the server refuses)"})
	}
}

// toolset describes the offered tools to the detectors; none for a call
// without tools, so that nothing is taken for a call.
func (s *Session) toolset(withTools bool) *detect.Toolset {
	if !withTools {
		return detect.NewToolset()
	}
	return toolsetOf(s.offered())
}

func toolsetOf(list []tools.Tool) *detect.Toolset {
	infos := make([]detect.ToolInfo, 0, len(list))
	for _, tl := range list {
		infos = append(infos, detect.ToolInfo{Name: tl.Name(), Schema: tl.Schema()})
	}
	return detect.NewToolset(infos...)
}

func progressLine(p *llm.Progress) string {
	return fmt.Sprintf("Reading the prompt %s/%s tokens", kilo(p.Processed), kilo(p.Total))
}

func kilo(n int) string {
	if n < 1000 {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%.1fk", float64(n)/1000)
}
