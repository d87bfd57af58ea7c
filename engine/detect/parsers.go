package detect

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// The readers of the families: each turns one complete segment of text
// into calls, or says why it cannot.

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
		case key == "type":
			// Llama's {"type": "function", "name": …, "parameters": …}.
			v, n := readString(h[i:])
			if n < 0 {
				if len(h)-i > 12 {
					return headerReject
				}
				return headerWait
			}
			if v != "function" {
				return headerReject
			}
			i = skipWS(h, i+n)
			if i >= len(h) {
				return headerWait
			}
			if h[i] != ',' {
				return headerReject
			}
			i++
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

// jsonCall reads {"name": …, "arguments": {…}} (and its variants: "tool",
// "tool_name", "function", "parameters", "input", Llama's
// "type": "function"). strict (a bare JSON answer) also refuses any other
// key, a missing arguments object and a tool that is not offered.
func jsonCall(s string, ts *Toolset, strict bool) (jsonCallParts, bool) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&m); err != nil || m == nil {
		return jsonCallParts{problem: "the JSON of the call is not valid"}, false
	}
	return callFromMap(m, ts, strict)
}

func callFromMap(m map[string]json.RawMessage, ts *Toolset, strict bool) (jsonCallParts, bool) {
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
		case k == "type" && string(bytes.TrimSpace(v)) == `"function"`:
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

// jsonCalls reads the calls written as JSON in s: one object, several
// objects one after the other (whitespace or ";" between), or a list of
// objects.
func jsonCalls(s string, strict bool) ([]Call, string) {
	dec := json.NewDecoder(strings.NewReader(s))
	var calls []Call
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if len(calls) > 0 && err.Error() == "EOF" {
				return calls, ""
			}
			if len(calls) > 0 && strings.TrimLeft(strings.TrimSpace(s[dec.InputOffset():]), ";") == "" {
				return calls, ""
			}
			if len(calls) > 0 {
				// Closing markers after the last value are the caller's.
				return calls, ""
			}
			return nil, "the JSON of the call is not valid"
		}
		var items []json.RawMessage
		if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '[' {
			if json.Unmarshal(v, &items) != nil || len(items) == 0 {
				return nil, "the list of calls is not valid"
			}
		} else {
			items = []json.RawMessage{v}
		}
		items = rawToolCalls(items)
		for _, it := range items {
			var m map[string]json.RawMessage
			if json.Unmarshal(it, &m) != nil || m == nil {
				return nil, "a call is not a JSON object"
			}
			// A nested {"function": {"name", "arguments"}} (OpenAI's shape).
			if f, ok := m["function"]; ok && len(bytes.TrimSpace(f)) > 0 && bytes.TrimSpace(f)[0] == '{' {
				var inner map[string]json.RawMessage
				if json.Unmarshal(f, &inner) == nil {
					m = inner
				}
			}
			p, ok := callFromMap(m, nil, strict)
			if !ok {
				return nil, p.problem
			}
			calls = append(calls, Call{Name: p.name, Arguments: p.args})
		}
		// Separators between objects: whitespace (the decoder skips it) or ";".
		rest := s[dec.InputOffset():]
		t := strings.TrimLeft(rest, " \t\r\n")
		if strings.HasPrefix(t, ";") {
			dec = json.NewDecoder(strings.NewReader(t[1:]))
			s = t[1:]
		}
		if strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(s[dec.InputOffset():]), ";")) == "" {
			return calls, ""
		}
		if t := strings.TrimLeft(s[dec.InputOffset():], " \t\r\n"); t == "" || t[0] != '{' && t[0] != '[' {
			return calls, ""
		}
	}
}

// rawToolCalls replaces an OpenAI message ({"tool_calls": […]}, as
// GLM-4.5 writes one) by the calls it holds.
func rawToolCalls(items []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for _, it := range items {
		var m struct {
			ToolCalls []json.RawMessage `json:"tool_calls"`
		}
		if json.Unmarshal(it, &m) == nil && len(m.ToolCalls) > 0 {
			out = append(out, m.ToolCalls...)
			continue
		}
		out = append(out, it)
	}
	return out
}

// argsObject returns v if it is a JSON object, the object inside if v is a
// string holding one (double-encoded arguments), else nil.
func argsObject(v json.RawMessage) json.RawMessage {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '{' {
		if !json.Valid(v) {
			return nil
		}
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

// parseMistral reads [TOOL_CALLS] followed by a JSON list of calls, or by
// name[ARGS]{…} (name[CALL_ID]id[ARGS]{…}; name{…}).
func parseMistral(s string, _ *Toolset) ([]Call, string) {
	t := strings.TrimSpace(strings.TrimPrefix(s, "[TOOL_CALLS]"))
	t = strings.TrimSuffix(t, "</s>")
	if strings.HasPrefix(t, "[") {
		return jsonCalls(t, false)
	}
	n := 0
	for n < len(t) && isName(t[n:n+1]) {
		n++
	}
	name := t[:n]
	i := strings.IndexByte(t, '{')
	j := jsonEnd(t, i)
	if i < 0 || j < 0 {
		return nil, "the call is unfinished"
	}
	args := argsObject(json.RawMessage(t[i:j]))
	if args == nil {
		return nil, "the arguments are not a JSON object"
	}
	return one(name, args), ""
}

// parseGLM reads <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>;
// values are typed from the tool's schema, as Qwen's XML values are.
func parseGLM(s string, ts *Toolset) ([]Call, string) {
	body := strings.TrimPrefix(s, tagToolCall)
	body, _, closed := strings.Cut(body, tagToolEnd)
	if !closed {
		return nil, "the call is unfinished"
	}
	name, rest, _ := strings.Cut(body, "<arg_key>")
	name = strings.TrimSpace(name)
	args := newArgObject(name, ts)
	for rest != "" {
		key, after, ok := strings.Cut(rest, "</arg_key>")
		if !ok {
			return nil, "an <arg_key> is unfinished"
		}
		key = strings.TrimSpace(key)
		_, after, ok = strings.Cut(after, "<arg_value>")
		if !ok {
			return nil, "an <arg_key> has no <arg_value>"
		}
		value, next, _ := strings.Cut(after, "</arg_value>")
		_, rest, _ = strings.Cut(next, "<arg_key>")
		args.typed(key, value)
	}
	return one(name, args.json()), ""
}

// parseDeepSeek reads the calls of a DeepSeek section: each
// <｜tool▁call▁begin｜>function<｜tool▁sep｜>name + a fenced JSON object (V3,
// R1), or name<｜tool▁sep｜>{…} (V3.1), up to <｜tool▁call▁end｜>.
func parseDeepSeek(s string, _ *Toolset) ([]Call, string) {
	s = dsNorm(s)
	var calls []Call
	for _, part := range strings.Split(s, dsCallBegin)[1:] {
		item, _, _ := strings.Cut(part, dsCallEnd)
		head, tail, ok := strings.Cut(item, dsSep)
		if !ok {
			return nil, "a call has no " + dsSep
		}
		name := strings.TrimSpace(head)
		if name == "function" {
			line, rest, _ := strings.Cut(tail, "\n")
			name, tail = strings.TrimSpace(line), rest
		}
		i := strings.IndexByte(tail, '{')
		j := jsonEnd(tail, i)
		if i < 0 || j < 0 {
			return nil, "the call is unfinished"
		}
		args := argsObject(json.RawMessage(tail[i:j]))
		if args == nil {
			return nil, "the arguments are not a JSON object"
		}
		calls = append(calls, Call{Name: name, Arguments: args})
	}
	if len(calls) == 0 {
		return nil, "no call was read"
	}
	return calls, ""
}

// parseKimi reads <|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…
func parseKimi(s string, _ *Toolset) ([]Call, string) {
	var calls []Call
	for _, part := range strings.Split(s, kimiCallBegin)[1:] {
		item, _, _ := strings.Cut(part, kimiCallEnd)
		id, raw, ok := strings.Cut(item, kimiArgs)
		if !ok {
			return nil, "a call has no " + kimiArgs
		}
		id = strings.TrimSpace(id)
		if k := strings.LastIndexByte(id, ':'); k >= 0 {
			id = id[:k]
		}
		id = strings.TrimPrefix(id, "functions.")
		args := argsObject(json.RawMessage(strings.TrimSpace(raw)))
		if args == nil {
			return nil, "the arguments are not a JSON object"
		}
		calls = append(calls, Call{Name: id, Arguments: args})
	}
	if len(calls) == 0 {
		return nil, "no call was read"
	}
	return calls, ""
}

// jsonOrPyCalls reads JSON calls, or Python calls: f(a=1), a list of
// them [f(a=1), g(b="x")], a dotted name (default_api.f, functions.f)
// standing for its last part.
func jsonOrPyCalls(s string) ([]Call, string) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[{") || strings.HasPrefix(t, "[ {") || strings.HasPrefix(t, "[\n") && strings.Contains(t, "{") && !strings.Contains(t, "(") {
		return jsonCalls(t, false)
	}
	p := &pyParser{s: t}
	calls, err := p.calls()
	if err != "" {
		return nil, err
	}
	return calls, ""
}

// pyParser reads Python call expressions with literal arguments.
type pyParser struct {
	s string
	i int
}

func (p *pyParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) calls() ([]Call, string) {
	list := p.eat('[')
	var calls []Call
	for {
		c, err := p.call()
		if err != "" {
			return nil, err
		}
		calls = append(calls, c)
		if !list || !p.eat(',') {
			break
		}
	}
	if list && !p.eat(']') {
		return nil, "the list of calls is not closed"
	}
	p.eat(';')
	p.ws()
	if p.i != len(p.s) {
		return nil, "the Python call is not valid"
	}
	return calls, ""
}

func (p *pyParser) call() (Call, string) {
	p.ws()
	start := p.i
	for p.i < len(p.s) && isName(p.s[p.i:p.i+1]) {
		p.i++
	}
	name := p.s[start:p.i]
	if k := strings.LastIndexByte(name, '.'); k >= 0 {
		name = name[k+1:]
	}
	if name == "" || !p.eat('(') {
		return Call{}, "the Python call is not valid"
	}
	args := newArgObject(name, nil)
	for n := 0; !p.eat(')'); n++ {
		if n > 0 && !p.eat(',') {
			return Call{}, "the Python call's arguments are not valid"
		}
		if p.eat(')') {
			break
		}
		p.ws()
		ks := p.i
		for p.i < len(p.s) && isName(p.s[p.i:p.i+1]) && p.s[p.i] != '.' {
			p.i++
		}
		key := p.s[ks:p.i]
		if key == "" || !p.eat('=') {
			return Call{}, "the call has a positional argument: name every argument"
		}
		v, ok := p.value()
		if !ok {
			return Call{}, "the Python call's arguments are not valid"
		}
		args.raw(key, v)
	}
	return Call{Name: name, Arguments: args.json()}, ""
}

// value reads a Python literal as JSON.
func (p *pyParser) value() ([]byte, bool) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '"' || c == '\'':
		s, ok := p.str(c)
		if !ok {
			return nil, false
		}
		var b bytes.Buffer
		writeJSONString(&b, s)
		return b.Bytes(), true
	case c == '[' || c == '(':
		closeBy := byte(']')
		if c == '(' {
			closeBy = ')'
		}
		p.i++
		var b bytes.Buffer
		b.WriteByte('[')
		for !p.eat(closeBy) {
			if b.Len() > 1 && !p.eat(',') {
				return nil, false
			}
			if p.eat(closeBy) {
				break
			}
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.Write(v)
		}
		b.WriteByte(']')
		return b.Bytes(), true
	case c == '{':
		p.i++
		var b bytes.Buffer
		b.WriteByte('{')
		for !p.eat('}') {
			if b.Len() > 1 && !p.eat(',') {
				return nil, false
			}
			if p.eat('}') {
				break
			}
			k, ok := p.value()
			if !ok || len(k) == 0 || k[0] != '"' || !p.eat(':') {
				return nil, false
			}
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteByte('}')
		return b.Bytes(), true
	}
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(",)]} \t\r\n", p.s[p.i]) < 0 {
		p.i++
	}
	word := p.s[start:p.i]
	switch word {
	case "True", "true":
		return []byte("true"), true
	case "False", "false":
		return []byte("false"), true
	case "None", "null":
		return []byte("null"), true
	}
	if isJSONNumber(word) {
		return []byte(word), true
	}
	if f, err := strconv.ParseFloat(word, 64); err == nil {
		return []byte(strconv.FormatFloat(f, 'g', -1, 64)), true
	}
	return nil, false
}

// str reads a Python string literal quoted by q.
func (p *pyParser) str(q byte) (string, bool) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == q:
			return b.String(), true
		case c == '\\' && p.i < len(p.s):
			e := p.s[p.i]
			p.i++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}
