package detect

import (
	"encoding/json"
	"fmt"
	"strings"
)

// TextCallFormat names the syntax of a tool call written as text: one
// family of the table in families.go.
type TextCallFormat string

// Call is one tool call read from text.
type Call struct {
	// Name is the tool name as written (it may be an alias: resolve it
	// with Toolset.Resolve before running anything).
	Name string
	// Arguments is a JSON object.
	Arguments json.RawMessage
}

// TextCall is what the model wrote instead of real tool calls: one
// or more calls in one syntax, read as a whole.
type TextCall struct {
	Format TextCallFormat
	// Calls are the calls in the order written, as far as they could be
	// read; they run only when Problem is "". Several calls run all, in
	// order, or none.
	Calls []Call
	// Text is exactly what the model wrote for the calls, from the first
	// byte of the first one to where the detector stopped. It was not
	// shown.
	Text string
	// Whole: nothing but whitespace came before the calls in this
	// generation's text, so they are the whole answer.
	Whole bool
	// Problem is "" when every call names an offered tool (or an alias of
	// one) with an object of arguments and nothing but calls was written
	// from the first one on; otherwise what is wrong, for the note.
	Problem string
}

// Name is the first call's tool name, or "" when none was read.
func (c *TextCall) Name() string {
	if len(c.Calls) == 0 {
		return ""
	}
	return c.Calls[0].Name
}

// Convertible reports whether the engine may turn the text into real
// tool calls: they are the whole answer and valid. Otherwise the
// generation is retried with Note.
func (c *TextCall) Convertible() bool { return c.Whole && c.Problem == "" && len(c.Calls) > 0 }

// Note is the corrective note for the model when the calls are not run:
// the syntax it used, what it wrote (head and tail of it), that nothing
// ran, and what to do instead.
func (c *TextCall) Note() string {
	why := ""
	switch {
	case c.Problem != "":
		why = "; " + c.Problem
	case !c.Whole:
		why = "; there was text before it: a call must be the whole answer"
	}
	how := "Make a real tool call through the tool-calling interface instead"
	if n := c.Name(); n != "" && c.Problem == "" {
		how = fmt.Sprintf("Make a real %s tool call through the tool-calling interface instead", clip(n, 40))
	}
	return fmt.Sprintf("[error: you wrote a tool call as text (syntax: %s%s), so nothing ran:\n%s\n"+
		"A tool call written as text is never run. %s, or answer in plain words.]",
		familyOf(c.Format).title, why, excerpt(c.Text, 300, 100), how)
}

// Struggle is the warning shown to the user; converted says whether the
// engine ran the calls or asked again.
func (c *TextCall) Struggle(converted bool) Struggle {
	name := clip(c.Name(), 40)
	if name == "" {
		name = "a tool"
	}
	if n := len(c.Calls); n > 1 {
		name = fmt.Sprintf("%d calls", n)
	}
	syntax := familyOf(c.Format).title
	if converted {
		how := "run as a real call"
		if len(c.Calls) > 1 {
			how = "run as real calls, in order"
		}
		return Struggle{Warning, KindTextToolCall, fmt.Sprintf("text tool call: the model wrote %s as text (%s) — %s", name, syntax, how)}
	}
	return Struggle{Warning, KindTextToolCall, fmt.Sprintf("text tool call: the model wrote %s as text (%s) — asked to call it properly", name, syntax)}
}

// ServerFix is the one line naming what to change on the server so that
// this syntax comes back as real tool calls.
func (c *TextCall) ServerFix() string { return familyOf(c.Format).fix }

// TextCallOptions configures a TextCallDetector. Zero fields take the
// defaults.
type TextCallOptions struct {
	// MaxHold bounds the bytes held back, unshown, while an answer is not
	// yet known to be a call (default 16 KiB): past it, they are released
	// as text.
	MaxHold int
	// MaxCall bounds the calls once recognised (default 64 KiB): past it
	// the detector gives up and reports them as broken ("too long").
	MaxCall int
}

// TextCallState is where a TextCallDetector stands.
type TextCallState int

const (
	// TextScanning: text flows through; at most a few bytes that may
	// start a call are held.
	TextScanning TextCallState = iota
	// TextComposing: calls are being written as text; nothing is shown
	// until they end.
	TextComposing
	// TextDone: calls were returned; the generation should be cut and any
	// further input is ignored.
	TextDone
)

// TextCallDetector finds tool calls written as text in streamed content,
// in every syntax of the family table, while it streams: what may
// open a call is held, unshown, until decided, so markup is never shown,
// and the generation can be cut once the calls are followed by anything
// else. Feed it the answer text — after the ThinkFilter: reasoning is not
// the answer — and show what Write returns.
//
// It is strict, because a user who asked for a JSON example or about tool
// calling must not be hijacked: nothing inside Markdown code counts;
// every family checks the shape that follows its opening marker; the
// families without a marker of their own (a bare JSON object, a fenced
// block) count only as the whole answer, or only as its end; with no tool
// offered nothing counts.
//
// Not safe for concurrent use; one detector per generation.
type TextCallDetector struct {
	ts               *Toolset
	maxHold, maxCall int

	state     TextCallState
	md        mdState
	onlySpace bool // every released byte so far was whitespace
	prev      byte // the last released byte

	// held is everything since the first byte that may open a call. A
	// Builder, so that the probes read it as a string without a copy
	// (what it wrote is never changed, and Reset drops the buffer).
	held  strings.Builder
	whole bool    // only whitespace was released before held
	fam   *family // the family committed to; nil while a candidate
	// seg is where the call being composed starts in held, -1 between
	// calls; ends are the ends of the complete calls.
	seg  int
	ends []int
	// pending: the candidate may still become a call with more bytes.
	pending bool
	// dead marks the openers (of openers[first held byte]) already turned
	// down for what is held: a probe's reject is final, so it is not
	// asked again at every byte.
	dead uint64
	// awaiting: the call is complete but for closing markers that may
	// follow; every byte is looked at until decided.
	awaiting bool
	// structured: the server sent a real tool call in this generation;
	// call markup in the text is its leak, stripped and never reported.
	structured bool
}

// NewTextCallDetector returns a detector for one generation, knowing the
// tools offered to it.
func NewTextCallDetector(ts *Toolset, opts TextCallOptions) *TextCallDetector {
	return &TextCallDetector{
		ts:        ts,
		maxHold:   or(opts.MaxHold, 16<<10),
		maxCall:   or(opts.MaxCall, 64<<10),
		md:        newMD(),
		onlySpace: true,
		seg:       -1,
	}
}

// Structured tells the detector the server sent a real (structured) tool
// call. A structured call always wins: markup held or being composed is
// the server leaking the call into the content (llama-server with
// Qwen3-Coder streams "<tool_call>\n<function=name" as text, then the real
// tool_calls delta). From now on a call written as text, finished or not,
// is stripped from the shown text instead of reported.
func (d *TextCallDetector) Structured() { d.structured = true }

// State says whether the detector is scanning, composing calls, or done.
func (d *TextCallDetector) State() TextCallState { return d.state }

// Write takes the next text delta. It returns the text to show now, and a
// non-nil call once, when calls written as text are decided: cut the
// generation then. After that, Write ignores its input.
func (d *TextCallDetector) Write(delta string) (show string, call *TextCall) {
	// Fast path: plain text with nothing held passes through as is.
	i := 0
	if d.state == TextScanning && d.held.Len() == 0 {
		for ; i < len(delta) && !d.starts(delta[i]); i++ {
			d.note(delta[i])
		}
		if i == len(delta) {
			return delta, nil
		}
	}
	var out strings.Builder
	out.WriteString(delta[:i])
	call = d.feed(delta[i:], &out)
	return out.String(), call
}

// Flush ends the stream: held bytes that did not become a call are
// released; calls still being composed are decided, broken unless they
// only lacked their closing markers.
func (d *TextCallDetector) Flush() (show string, call *TextCall) {
	var out strings.Builder
	for d.state != TextDone && d.held.Len() > 0 {
		if d.structured {
			d.drop()
			break
		}
		if d.fam == nil {
			if f := d.decide(true); f != nil {
				d.commit(f)
				continue
			}
			if call = d.reject(&out); call != nil {
				break
			}
			continue
		}
		call = d.finish(true, d.held.Len())
		break
	}
	return out.String(), call
}

func (d *TextCallDetector) feed(s string, out *strings.Builder) *TextCall {
	for i := 0; i < len(s); i++ {
		if d.state == TextDone {
			return nil
		}
		c := s[i]
		if d.held.Len() == 0 {
			if d.starts(c) {
				d.held.Reset()
				d.held.WriteByte(c)
				d.dead = 0
				d.whole, d.fam, d.seg, d.ends = d.onlySpace, nil, 0, d.ends[:0]
				if call := d.step(out); call != nil {
					return call
				}
				continue
			}
			d.release(c, out)
			continue
		}
		d.held.WriteByte(c)
		if call := d.step(out); call != nil {
			return call
		}
	}
	return nil
}

// step advances what is held by its last byte.
func (d *TextCallDetector) step(out *strings.Builder) *TextCall {
	if d.fam == nil {
		if f := d.decide(false); f != nil {
			d.commit(f)
			return d.advance(out)
		}
		if d.pending && d.held.Len() <= d.maxHold {
			return nil
		}
		return d.reject(out)
	}
	if h := d.held.String(); d.seg >= 0 && !d.awaiting && !trigger(h[len(h)-1]) {
		if len(h) > d.maxCall {
			return d.finish(false, len(h))
		}
		return nil
	}
	return d.advance(out)
}

// commit makes the candidate a call of family f.
func (d *TextCallDetector) commit(f *family) {
	d.fam, d.state, d.seg = f, TextComposing, 0
}

// advance ends the call being composed when its end is held, and looks at
// what follows the last complete call: nothing yet, the start of another
// call of the family, or anything else, which ends the calls.
func (d *TextCallDetector) advance(out *strings.Builder) *TextCall {
	for {
		if d.seg >= 0 {
			n := d.fam.end(d.held.String()[d.seg:], false)
			d.awaiting = n == awaitNext
			if n < 0 {
				if d.held.Len() > d.maxCall {
					return d.finish(false, d.held.Len())
				}
				return nil
			}
			d.ends = append(d.ends, d.seg+n)
			d.seg = -1
			if d.structured {
				// The leak of a real call: dropped; what follows is text.
				rest := d.held.String()[d.ends[len(d.ends)-1]:]
				d.drop()
				return d.feed(rest, out)
			}
		}
		last := d.ends[len(d.ends)-1]
		tail := d.held.String()[last:]
		t := strings.TrimLeft(tail, " \t\r\n")
		if t == "" {
			return nil
		}
		next := -1
		for _, o := range d.fam.opens {
			if isPrefixOf(t, o) {
				return nil
			}
			if strings.HasPrefix(t, o) {
				next = last + len(tail) - len(t)
			}
		}
		if next < 0 {
			// Text after the calls: they are decided; the generation can
			// be cut here.
			return d.finish(false, d.held.Len())
		}
		d.seg = next
	}
}

// drop forgets what is held (a structured call's leak) and scans on.
func (d *TextCallDetector) drop() {
	d.held.Reset()
	d.fam, d.seg, d.ends, d.state, d.awaiting = nil, -1, d.ends[:0], TextScanning, false
}

// reject releases the first held byte as text and feeds the rest again
// (it may hold the start of a real call: "<<tool_call>").
func (d *TextCallDetector) reject(out *strings.Builder) *TextCall {
	h := d.held.String()
	rest, first := h[1:], h[0]
	d.held.Reset()
	d.fam, d.seg, d.state, d.pending, d.awaiting = nil, -1, TextScanning, false, false
	d.release(first, out)
	return d.feed(rest, out)
}

func (d *TextCallDetector) release(c byte, out *strings.Builder) {
	out.WriteByte(c)
	d.note(c)
}

// note accounts for a released byte.
func (d *TextCallDetector) note(c byte) {
	d.md.feed(c)
	d.prev = c
	if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
		d.onlySpace = false
	}
}

// starts reports whether c may open a call here.
func (d *TextCallDetector) starts(c byte) bool {
	fb := firstBytes[c]
	if !(fb.any || fb.bol && d.atLineStart() || fb.whole && d.onlySpace) || d.ts.Len() == 0 {
		return false
	}
	if c == '`' {
		// A fence opener; asking inCode would end the run in progress.
		if !d.md.openRun() {
			return false
		}
	} else if d.md.inCode() {
		return false
	}
	// A call quoted in prose ("the model wrote "<tool_call>…") is not one.
	return d.prev != '"' && d.prev != '\'' && d.prev != '`'
}

// atLineStart reports whether the held bytes start a line.
func (d *TextCallDetector) atLineStart() bool {
	return d.prev == 0 || d.prev == '\n'
}

// decide tries every opener of every family on the held bytes: the first
// family whose probe commits wins. pending is set when some family may
// still commit with more bytes. final: the stream ended.
func (d *TextCallDetector) decide(final bool) *family {
	h := d.held.String()
	d.pending = false
	for i, op := range openers[h[0]] {
		f, o := op.f, op.open
		switch {
		case d.dead&(1<<i) != 0:
			continue
		case f.whole && !d.whole || f.bol && !d.atLineStart():
			d.dead |= 1 << i
			continue
		case isPrefixOf(h, o):
			d.pending = d.pending || !final
			continue
		case !strings.HasPrefix(h, o):
			d.dead |= 1 << i
			continue
		}
		switch f.probe(o, h[len(o):], d.ts, final) {
		case commit:
			if f.fallback && d.pending {
				continue // a family with a reader may still claim it
			}
			return f
		case wait:
			d.pending = d.pending || !final
		case reject:
			d.dead |= 1 << i
		}
	}
	return nil
}

// finish reads the held calls, up to cut, and ends the detector.
func (d *TextCallDetector) finish(final bool, cut int) *TextCall {
	text := d.held.String()[:cut]
	c := &TextCall{Format: d.fam.format, Text: text, Whole: d.whole}
	start, problem := 0, ""
	segs := append([]int(nil), d.ends...)
	trailing, unfinished := false, false
	switch {
	case d.seg >= 0 && d.held.Len() > d.maxCall:
		problem = fmt.Sprintf("the call passed %s bytes and was stopped", thousands(d.maxCall))
	case d.seg >= 0:
		// The stream ended inside a call: its end may only lack a marker.
		n := d.fam.end(text[d.seg:], true)
		if n < 0 {
			n, unfinished = len(text)-d.seg, true
		}
		segs = append(segs, d.seg+n)
		trailing = strings.TrimSpace(text[d.seg+n:]) != ""
	case len(segs) > 0:
		trailing = strings.TrimSpace(text[segs[len(segs)-1]:]) != ""
	}
	for _, end := range segs {
		if problem != "" {
			break
		}
		seg := strings.TrimLeft(text[start:end], " \t\r\n")
		start = end
		parse := d.fam.parse
		if d.fam.inner {
			parse = fencedCalls
		}
		calls, p := parse(seg, d.ts)
		if p != "" {
			problem = p
			if unfinished && end == segs[len(segs)-1] && strings.Contains(p, "not valid") {
				problem = "the call is unfinished"
			}
			break
		}
		c.Calls = append(c.Calls, calls...)
	}
	if problem == "" {
		switch {
		case trailing:
			problem = "text follows the call: a call must be the whole answer"
		case len(c.Calls) == 0:
			problem = "no call could be read"
		}
	}
	for _, call := range c.Calls {
		if problem != "" {
			break
		}
		if !d.ts.Known(call.Name) {
			problem = fmt.Sprintf("there is no tool named %q; your tools are: %s", clip(call.Name, 40), list(d.ts.Names()))
			break
		}
		// A call written as text is run only whole: an argument left out
		// is not guessed.
		r := d.ts.Resolve(call.Name, call.Arguments)
		if m := d.ts.Missing(r.Name, r.Args); m != "" {
			problem = fmt.Sprintf("the call to %s has no %q argument, which it requires", clip(call.Name, 40), m)
		}
	}
	c.Problem = problem
	d.state = TextDone
	return c
}

// isPrefixOf reports whether s is a proper prefix of tag.
func isPrefixOf(s, tag string) bool { return len(s) < len(tag) && strings.HasPrefix(tag, s) }

// trigger reports whether a call may end with byte c: every family's end
// is one of these, so the end is looked for only there.
func trigger(c byte) bool {
	switch c {
	case '>', ']', '}', '`', ')', '\n':
		return true
	}
	return false
}

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Syntax names the syntax the calls were written in, as the notes do.
func (c *TextCall) Syntax() string { return familyOf(c.Format).title }

// FindTextCall reads a whole answer as a generation would have streamed
// it — reasoning set aside, then the detector — and returns the calls
// written as text in it, nil when there are none. tools are the names of
// the tools offered.
func FindTextCall(answer string, tools ...string) *TextCall {
	infos := make([]ToolInfo, len(tools))
	for i, n := range tools {
		infos[i] = ToolInfo{Name: n}
	}
	think := NewThinkFilter(ThinkOptions{})
	d := NewTextCallDetector(NewToolset(infos...), TextCallOptions{})
	for _, segs := range [][]Segment{think.Write(answer), think.Flush()} {
		for _, s := range segs {
			if s.Reasoning {
				continue
			}
			if _, c := d.Write(s.Text); c != nil {
				return c
			}
		}
	}
	_, c := d.Flush()
	return c
}

// ReasoningCall finds a call written as text inside the reasoning of a
// generation that answered nothing and called nothing: the model wrote
// its call in <think> (or the reasoning field) and stopped. It never
// runs — reasoning is not a decision — but it is not dropped either: the
// model is told where it wrote it. nil when the reasoning holds none.
func ReasoningCall(reasoning string, ts *Toolset) *TextCall {
	d := NewTextCallDetector(ts, TextCallOptions{})
	_, c := d.Write(reasoning)
	if c == nil {
		_, c = d.Flush()
	}
	if c == nil {
		return nil
	}
	c.Whole, c.Problem = false, "it is inside your reasoning, not in your answer"
	return c
}
