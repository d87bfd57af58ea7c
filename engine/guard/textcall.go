package guard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// TextCallFormat names the syntax of a tool call written as text.
type TextCallFormat string

const (
	// FormatHermes: <tool_call>{"name": …, "arguments": {…}}</tool_call>,
	// the Hermes/Qwen2.5 template's syntax, leaking into content when the
	// server does not parse it.
	FormatHermes TextCallFormat = "hermes"
	// FormatQwenXML: <function=name><parameter=p>value</parameter></function>,
	// Qwen3-Coder's syntax, bare or inside <tool_call>.
	FormatQwenXML TextCallFormat = "qwen_xml"
	// FormatJSON: a bare {"name": "bash", "arguments": {…}} (or "tool",
	// "parameters"…) as the very first thing of the answer.
	FormatJSON TextCallFormat = "json"
)

// TextCall is one tool call the model wrote as text (E18).
type TextCall struct {
	Format TextCallFormat
	// Name is the tool name as written (it may be an alias: resolve it
	// with Toolset.Resolve before running anything).
	Name string
	// Arguments is a JSON object, nil when Problem says why there is none.
	Arguments json.RawMessage
	// Text is exactly what the model wrote for the call, from its first
	// byte to where the detector stopped it. It was not shown.
	Text string
	// Whole: nothing but whitespace came before the call in this
	// generation's text, so the call is the whole answer.
	Whole bool
	// Problem is "" for a call naming an offered tool (or an alias of one)
	// with an object of arguments; otherwise what is wrong, for the note.
	Problem string
}

// Convertible reports whether the engine may turn the text into a real
// tool call (E18): it is the whole answer and it is valid. Otherwise the
// generation is retried with Note.
func (c *TextCall) Convertible() bool { return c.Whole && c.Problem == "" }

// Note is the corrective note for the model when the call is not
// converted: what it wrote (head and tail of it), that nothing ran, and
// what to do instead.
func (c *TextCall) Note() string {
	why, how := "", "Make a real tool call instead"
	if c.Problem != "" {
		why = " (" + c.Problem + ")"
	} else if c.Name != "" {
		how = fmt.Sprintf("Make a real %s tool call instead", clip(c.Name, 40))
	}
	return fmt.Sprintf("[error: you wrote a tool call as text in your answer%s, so nothing ran:\n%s\n"+
		"A tool call written as text is never run. %s, or answer in plain words.]",
		why, excerpt(c.Text, 300, 100), how)
}

// Struggle is the warning shown to the user; converted says whether the
// engine ran it as a real call or retried.
func (c *TextCall) Struggle(converted bool) Struggle {
	name := clip(c.Name, 40)
	if name == "" {
		name = "a tool"
	}
	if converted {
		return Struggle{Warning, KindTextToolCall, fmt.Sprintf("text tool call: the model wrote %s as text — run as a real call", name)}
	}
	return Struggle{Warning, KindTextToolCall, fmt.Sprintf("text tool call: the model wrote %s as text — asked to call it properly", name)}
}

// TextCallOptions configures a TextCallDetector. Zero fields take the
// defaults.
type TextCallOptions struct {
	// MaxHold bounds the bytes held back, unshown, while a bare JSON
	// answer is not yet known to be a call (default 16 KiB): past it, the
	// JSON is released as text.
	MaxHold int
	// MaxCall bounds a call once recognised (default 64 KiB): past it the
	// detector gives up and reports the call as broken ("too long").
	MaxCall int
}

// TextCallState is where a TextCallDetector stands.
type TextCallState int

const (
	// TextScanning: text flows through; at most a few bytes that may
	// start a call are held.
	TextScanning TextCallState = iota
	// TextComposing: a call is being written as text; nothing is shown
	// until it ends (the engine may say "composing a tool call").
	TextComposing
	// TextDone: a call was returned; the generation should be cut and
	// any further input is ignored.
	TextDone
)

type candidate int

const (
	candNone candidate = iota
	candTag            // '<' that may start <tool_call> or <function=
	candJSON           // '{' opening the answer
)

const (
	tagToolCall  = "<tool_call>"
	tagToolEnd   = "</tool_call>"
	tagFunction  = "<function="
	tagFuncEnd   = "</function>"
	tagParameter = "<parameter="
	tagParamEnd  = "</parameter>"
	maxTagSlack  = 64   // whitespace or name bytes tolerated inside an opening
	maxHeader    = 1024 // a bare JSON call names its tool within this
)

// TextCallDetector finds tool calls written as text in streamed content
// (E18), while it streams, so the engine can cut the generation instead of
// letting the model unroll a fake call (sometimes a whole file) that will
// never run. Feed it the answer text — after the ThinkFilter: reasoning is
// not the answer — and show what Write returns.
//
// It is strict, because a user who asked for a JSON example or about tool
// calling must not be hijacked:
//   - nothing inside Markdown code (fenced blocks, inline code) counts;
//   - <tool_call> counts only when followed by { or <function=, and
//     <function=x> only when x is an offered tool (or an alias of one), or
//     when <parameter= follows;
//   - a bare JSON object counts only as the first thing of the answer,
//     with only name-like and arguments-like keys, naming an offered tool,
//     with an object of arguments;
//   - with no tool offered (E19) nothing counts.
//
// Bytes that may start a call are held, unshown, until decided; a call is
// never shown. Not safe for concurrent use; one detector per generation.
type TextCallDetector struct {
	ts               *Toolset
	maxHold, maxCall int

	state     TextCallState
	md        mdState
	onlySpace bool // every released byte so far was whitespace

	cand   candidate
	held   []byte
	whole  bool
	format TextCallFormat
	// while composing: how the call ends
	js   jsonScan // the JSON object (Hermes, bare JSON)
	jsAt int      // offset in held where that object starts; -1: none
	ends []string // end markers
	// bare JSON before commitment
	argsFirst bool
	// structured: the server sent a real tool call in this generation;
	// call markup in the text is its leak, dropped and never reported.
	structured bool
	// closing: a call was just dropped; a </tool_call> right after it
	// (whitespace allowed) is dropped too, held in held meanwhile.
	closing bool
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
	}
}

// Structured tells the detector the server sent a real (structured) tool
// call. A structured call always wins: markup held or being composed is
// the server leaking the call into the content (llama-server with
// Qwen3-Coder streams "<tool_call>\n<function=name" as text, then the real
// tool_calls delta). From now on a call written as text, finished or not,
// is stripped from the shown text instead of reported.
func (d *TextCallDetector) Structured() { d.structured = true }

// found reports a call, or drops it when a structured call wins: the
// detector then scans on.
func (d *TextCallDetector) found(c *TextCall) *TextCall {
	if c == nil || !d.structured {
		return c
	}
	d.state, d.cand, d.held = TextScanning, candNone, d.held[:0]
	d.closing = !strings.HasSuffix(c.Text, tagToolEnd)
	return nil
}

// close advances the stripping of a </tool_call> after a dropped call by
// the last held byte: it reports whether the byte was taken; when not, the
// held bytes are to be fed again as ordinary text.
func (d *TextCallDetector) close() (taken bool) {
	h := strings.TrimLeft(string(d.held), " \t\r\n")
	switch {
	case h == tagToolEnd:
		d.held, d.closing = d.held[:0], false
		return true
	case strings.HasPrefix(tagToolEnd, h):
		return true
	}
	d.closing = false
	return false
}

// State says whether the detector is scanning, composing a call, or done.
func (d *TextCallDetector) State() TextCallState { return d.state }

// Write takes the next text delta. It returns the text to show now, and a
// non-nil call once, when a call written as text has ended: cut the
// generation then. After that, Write ignores its input.
func (d *TextCallDetector) Write(delta string) (show string, call *TextCall) {
	// Fast path: plain text with nothing held passes through as is.
	i := 0
	if d.state == TextScanning && d.cand == candNone && !d.closing {
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
// released; a call still being composed is returned, broken unless it
// only lacked its closing tags.
func (d *TextCallDetector) Flush() (show string, call *TextCall) {
	var out strings.Builder
	if d.structured {
		// Whatever is still held is a leaked call's markup or its end.
		d.state, d.cand, d.held, d.closing = TextScanning, candNone, d.held[:0], false
	}
	for d.state != TextDone && d.cand != candNone {
		if d.state == TextComposing {
			call = d.finish(endStream)
			break
		}
		if d.cand == candJSON && d.js.done {
			if c := d.finish(endStream); c != nil {
				call = c
				break
			}
		}
		if call = d.reject(&out); call != nil {
			break
		}
	}
	return out.String(), d.found(call)
}

func (d *TextCallDetector) feed(s string, out *strings.Builder) *TextCall {
	for i := 0; i < len(s); i++ {
		if d.state == TextDone {
			return nil
		}
		c := s[i]
		if d.closing {
			d.held = append(d.held, c)
			if d.close() {
				continue
			}
			rest := string(d.held)
			d.held = d.held[:0]
			if call := d.feed(rest, out); call != nil {
				return call
			}
			continue
		}
		if d.cand == candNone {
			if d.starts(c) {
				d.held = append(d.held[:0], c)
				d.whole = d.onlySpace
				d.js, d.jsAt, d.ends, d.argsFirst = jsonScan{}, -1, nil, false
				if c == '{' {
					d.cand, d.jsAt = candJSON, 0
					d.js.feed(c)
				} else {
					d.cand = candTag
				}
				continue
			}
			d.release(c, out)
			continue
		}
		d.held = append(d.held, c)
		var verdict int
		switch {
		case d.state == TextComposing:
			if call := d.found(d.compose()); call != nil {
				return call
			}
			continue
		case d.cand == candTag:
			verdict = d.evalTag()
		default:
			verdict = d.evalJSON()
		}
		switch verdict {
		case complete:
			if call := d.finish(endNormal); call != nil {
				if call = d.found(call); call != nil {
					return call
				}
				continue // dropped: a structured call wins
			}
			fallthrough // a bare JSON that is not a call after all
		case reject:
			if call := d.reject(out); call != nil {
				return call
			}
		}
	}
	return nil
}

// reject releases the first held byte as text and feeds the rest again
// (it may hold the start of a real call: "<<tool_call>").
func (d *TextCallDetector) reject(out *strings.Builder) *TextCall {
	rest := string(d.held[1:])
	d.release(d.held[0], out)
	d.cand, d.held = candNone, d.held[:0]
	return d.feed(rest, out)
}

func (d *TextCallDetector) release(c byte, out *strings.Builder) {
	out.WriteByte(c)
	d.note(c)
}

// note accounts for a released byte.
func (d *TextCallDetector) note(c byte) {
	d.md.feed(c)
	if c != ' ' && c != '\n' && c != '\t' && c != '\r' {
		d.onlySpace = false
	}
}

// starts reports whether c may open a call here.
func (d *TextCallDetector) starts(c byte) bool {
	if (c != '<' && c != '{') || d.ts.Len() == 0 || d.md.inCode() {
		return false
	}
	return c == '<' || d.onlySpace
}

const (
	wait = iota
	reject
	commit
	complete
)

// evalTag decides on held bytes starting with '<'.
func (d *TextCallDetector) evalTag() int {
	h := string(d.held)
	if isPrefixOf(h, tagToolCall) || isPrefixOf(h, tagFunction) {
		return wait
	}
	if rest, ok := strings.CutPrefix(h, tagToolCall); ok {
		r := strings.TrimLeft(rest, " \t\r\n")
		switch {
		case len(rest)-len(r) > maxTagSlack:
			return reject
		case r == "" || isPrefixOf(r, tagFunction):
			return wait
		case r[0] == '{':
			d.startCompose(FormatHermes, len(h)-len(r), tagToolEnd)
			return d.compose2()
		case strings.HasPrefix(r, tagFunction):
			// Decided: the rest is Qwen XML inside <tool_call>.
			d.startCompose(FormatQwenXML, -1, tagFuncEnd, tagToolEnd)
			return d.compose2()
		}
		return reject
	}
	if rest, ok := strings.CutPrefix(h, tagFunction); ok {
		name, after, closed := strings.Cut(rest, ">")
		if !closed {
			if len(name) > maxTagSlack || !isName(name) {
				return reject
			}
			return wait
		}
		if !isName(name) || name == "" {
			return reject
		}
		if !d.ts.Known(name) {
			r := strings.TrimLeft(after, " \t\r\n")
			switch {
			case len(after)-len(r) > maxTagSlack:
				return reject
			case r == "" || isPrefixOf(r, tagParameter):
				return wait
			case !strings.HasPrefix(r, tagParameter):
				return reject
			}
		}
		d.startCompose(FormatQwenXML, -1, tagFuncEnd, tagToolEnd)
		return d.compose2()
	}
	return reject
}

// isPrefixOf reports whether s is a proper prefix of tag.
func isPrefixOf(s, tag string) bool { return len(s) < len(tag) && strings.HasPrefix(tag, s) }

func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func (d *TextCallDetector) startCompose(f TextCallFormat, jsAt int, ends ...string) {
	d.state, d.format, d.ends = TextComposing, f, ends
	d.js, d.jsAt = jsonScan{}, jsAt
	if jsAt >= 0 {
		for _, c := range d.held[jsAt:] {
			d.js.feed(c)
		}
	}
}

// compose2 is compose for the bytes already held at commitment; it maps
// its result onto the verdicts of feed.
func (d *TextCallDetector) compose2() int {
	if d.ended() {
		return complete
	}
	return commit
}

// compose advances a committed call by the last held byte.
func (d *TextCallDetector) compose() *TextCall {
	if d.jsAt >= 0 {
		d.js.feed(d.held[len(d.held)-1])
	}
	if d.ended() {
		return d.finish(endNormal)
	}
	if len(d.held) > d.maxCall {
		return d.finish(endTooLong)
	}
	return nil
}

// ended reports whether the call is complete after its last held byte:
// its JSON object closed, or it ends with one of its end markers — outside
// any JSON string, so that a file about tool calls, written in a call's
// arguments, does not end the call early.
func (d *TextCallDetector) ended() bool {
	if d.jsAt >= 0 {
		if d.js.done {
			return true
		}
		if d.js.inStr {
			return false
		}
	}
	for _, e := range d.ends {
		if bytes.HasSuffix(d.held, []byte(e)) {
			return true
		}
	}
	return false
}

// evalJSON decides on a bare JSON answer, before commitment.
func (d *TextCallDetector) evalJSON() int {
	d.js.feed(d.held[len(d.held)-1])
	if d.js.bad || len(d.held) > d.maxHold || !d.argsFirst && len(d.held) > maxHeader {
		return reject
	}
	if d.argsFirst {
		if d.js.done {
			return complete // finish parses it; not a call → released
		}
		return wait
	}
	switch jsonHeader(d.held, d.ts) {
	case headerReject:
		return reject
	case headerCommit:
		d.startCompose(FormatJSON, 0)
		return d.compose2()
	case headerArgsFirst:
		d.argsFirst = true
	}
	if d.js.done {
		return complete
	}
	return wait
}

// How a call ended, for finish.
const (
	endNormal  = iota // its closing tag, or its JSON object closed
	endStream         // the stream ended first (Flush)
	endTooLong        // MaxCall was passed
)

// finish turns the held text into a call. A bare JSON that turns out not
// to be a call returns nil (the caller releases it as text).
func (d *TextCallDetector) finish(how int) *TextCall {
	text := string(d.held)
	c := &TextCall{Format: d.format, Text: text, Whole: d.whole}
	switch {
	case d.cand == candJSON && d.state != TextComposing:
		// Arguments came before the name: a call only if it parses as one.
		m, ok := jsonCall(text, d.ts, true)
		if !ok {
			return nil
		}
		c.Format, c.Name, c.Arguments = FormatJSON, m.name, m.args
	case d.format == FormatQwenXML:
		c.Name, c.Arguments, c.Problem = parseQwen(text, d.ts, how != endNormal)
	default:
		inner := text
		if d.format == FormatHermes {
			// The decoder reads the first JSON value and stops: what
			// follows (</tool_call>) does not matter, and a closing tag
			// inside a string stays in the string.
			inner = strings.TrimSpace(strings.TrimPrefix(inner, tagToolCall))
		}
		m, ok := jsonCall(inner, d.ts, false)
		c.Name, c.Arguments, c.Problem = m.name, m.args, m.problem
		if !ok && how == endStream {
			c.Problem = "the call is unfinished"
		}
	}
	switch {
	case how == endTooLong:
		c.Arguments = nil
		c.Problem = fmt.Sprintf("the call passed %s bytes and was stopped", thousands(d.maxCall))
	case c.Problem == "" && !d.ts.Known(c.Name):
		c.Problem = fmt.Sprintf("there is no tool named %q; your tools are: %s", clip(c.Name, 40), list(d.ts.Names()))
	}
	if c.Problem != "" {
		c.Arguments = nil
	}
	d.state, d.cand = TextDone, candNone
	return c
}

// jsonScan follows the nesting of one JSON value, byte by byte, to know
// where it ends without parsing it.
type jsonScan struct {
	depth     int
	inStr     bool
	esc, done bool
	bad       bool
}

func (j *jsonScan) feed(c byte) {
	if j.done {
		return
	}
	if j.inStr {
		switch {
		case j.esc:
			j.esc = false
		case c == '\\':
			j.esc = true
		case c == '"':
			j.inStr = false
		}
		return
	}
	switch c {
	case '"':
		j.inStr = true
	case '{', '[':
		j.depth++
	case '}', ']':
		j.depth--
		if j.depth == 0 {
			j.done = true
		}
		if j.depth < 0 {
			j.bad = true
		}
	}
}

type header int

const (
	headerWait header = iota
	headerReject
	headerCommit
	headerArgsFirst
)

var (
	nameKeys = []string{"name", "tool", "tool_name", "function"}
	argKeys  = []string{"arguments", "args", "parameters", "input"}
)

// jsonHeader reads the beginning of a bare JSON answer, as far as it goes,
// to decide early: a key that is neither name-like nor arguments-like, or
// a name that is not an offered tool, rejects; an offered name followed by
// the start of an object of arguments commits; arguments before the name
// leave the decision to the end of the object.
func jsonHeader(h []byte, ts *Toolset) header {
	i := 1
	nameOK := false
	for {
		i = skipWS(h, i)
		if i >= len(h) {
			return headerWait
		}
		if h[i] != '"' {
			return headerReject // '}' (no args) or not JSON
		}
		key, n := readString(h[i:])
		if n < 0 {
			if len(h)-i > 40 {
				return headerReject
			}
			return headerWait
		}
		i = skipWS(h, i+n)
		if i >= len(h) {
			return headerWait
		}
		if h[i] != ':' {
			return headerReject
		}
		i = skipWS(h, i+1)
		if i >= len(h) {
			return headerWait
		}
		switch {
		case oneOf(key, nameKeys):
			if h[i] != '"' {
				return headerReject
			}
			name, n := readString(h[i:])
			if n < 0 {
				if len(h)-i > 80 {
					return headerReject
				}
				return headerWait
			}
			if !ts.Known(name) {
				return headerReject
			}
			nameOK = true
			i = skipWS(h, i+n)
			if i >= len(h) {
				return headerWait
			}
			if h[i] != ',' {
				return headerReject // {"name": "bash"} alone is no call
			}
			i++
		case oneOf(key, argKeys):
			if h[i] != '{' && h[i] != '"' {
				return headerReject
			}
			if nameOK {
				return headerCommit
			}
			return headerArgsFirst
		default:
			return headerReject
		}
	}
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

func skipWS(h []byte, i int) int {
	for i < len(h) && (h[i] == ' ' || h[i] == '\n' || h[i] == '\t' || h[i] == '\r') {
		i++
	}
	return i
}

// readString reads the JSON string at the start of h; n is the bytes it
// spans, -1 when it is not complete yet.
func readString(h []byte) (s string, n int) {
	for i := 1; i < len(h); i++ {
		switch h[i] {
		case '\\':
			i++
		case '"':
			if json.Unmarshal(h[:i+1], &s) != nil {
				return "", i + 1
			}
			return s, i + 1
		}
	}
	return "", -1
}

type jsonCallParts struct {
	name    string
	args    json.RawMessage
	problem string
}

// jsonCall reads {"name": …, "arguments": {…}} (and its variants). strict
// (bare JSON) also refuses any other key and a missing arguments object.
func jsonCall(s string, ts *Toolset, strict bool) (jsonCallParts, bool) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&m); err != nil || m == nil {
		return jsonCallParts{problem: "the JSON of the call is not valid"}, false
	}
	var p jsonCallParts
	for k, v := range m {
		switch {
		case oneOf(k, nameKeys):
			if json.Unmarshal(v, &p.name) != nil {
				return jsonCallParts{problem: "the tool name must be a string"}, false
			}
		case oneOf(k, argKeys):
			p.args = argsObject(v)
			if p.args == nil {
				p.problem = "the arguments are not a JSON object"
			}
		case strict:
			return jsonCallParts{}, false
		}
	}
	switch {
	case p.name == "":
		p.problem = "the call has no tool name"
	case p.args == nil && p.problem == "" && strict:
		return jsonCallParts{}, false
	case p.args == nil && p.problem == "":
		p.args = json.RawMessage("{}")
	}
	if strict && !ts.Known(p.name) {
		return jsonCallParts{}, false
	}
	return p, p.problem == ""
}

// argsObject returns v if it is a JSON object, the object inside if v is a
// string holding one (double-encoded arguments), else nil.
func argsObject(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '{' {
		return v
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		s = strings.TrimSpace(s)
		var probe map[string]json.RawMessage
		if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &probe) == nil {
			return json.RawMessage(s)
		}
	}
	return nil
}
