package detect

import (
	"bytes"
	"encoding/json"
	"strings"
)

// parseQwen reads a Qwen3-Coder call:
//
//	<function=bash>
//	<parameter=command>
//	ls -la
//	</parameter>
//	</function>
//
// leniently, as the servers' own parsers do: a parameter also ends at the
// next <parameter=, at </function> or at </tool_call>. One newline after
// the opening tag and one before the closing tag are the template's, not
// the value's. Values are typed from the tool's schema (a string stays a
// string, "30" for an integer becomes 30); with no schema, a value that is
// a JSON object or array is kept as JSON, anything else is a string.
//
// unfinished (the stream ended before </function>): the call is accepted
// only if its last parameter was closed, so that a value cut at max_tokens
// is never run as if complete.
func parseQwen(text string, ts *Toolset, unfinished bool) (name string, args json.RawMessage, problem string) {
	i := strings.Index(text, tagFunction)
	if i < 0 {
		return "", nil, "the call has no <function=…>"
	}
	rest := text[i+len(tagFunction):]
	name, body, ok := strings.Cut(rest, ">")
	if !ok || name == "" {
		return "", nil, "the call is unfinished"
	}
	if j := strings.Index(body, tagFuncEnd); j >= 0 {
		body, unfinished = body[:j], false
	} else if j := strings.Index(body, tagToolEnd); j >= 0 {
		body, unfinished = body[:j], false
	}

	if t := strings.TrimSpace(body); strings.HasPrefix(t, "{") && !strings.Contains(t, tagParameter) {
		// Llama 3.1's own custom-tool form: <function=name>{json}</function>
		// (its model card's prompt format).
		if args := argsObject(json.RawMessage(t)); args != nil {
			return name, args, ""
		}
		return name, nil, "the arguments are not a JSON object"
	}
	obj := newArgObject(name, ts)
	lastClosed := true
	for {
		k := strings.Index(body, tagParameter)
		if k < 0 {
			break
		}
		body = body[k+len(tagParameter):]
		pname, after, ok := strings.Cut(body, ">")
		if !ok {
			return name, nil, "a <parameter=…> tag is unfinished"
		}
		if strings.TrimSpace(pname) == "" {
			return name, nil, "a <parameter=…> has no name: name every argument"
		}
		value, next, closed := cutValue(after)
		body, lastClosed = next, closed
		obj.typed(pname, value)
	}
	if unfinished && !lastClosed {
		return name, nil, "the call is unfinished: its last parameter was cut off"
	}
	return name, obj.json(), ""
}

// cutValue splits a parameter value from what follows it.
func cutValue(s string) (value, rest string, closed bool) {
	end, next := len(s), len(s)
	if j := strings.Index(s, tagParamEnd); j >= 0 {
		end, next, closed = j, j+len(tagParamEnd), true
	}
	for _, t := range []string{tagParameter, tagFuncEnd} {
		if j := strings.Index(s[:end], t); j >= 0 {
			end, next, closed = j, j, false
		}
	}
	v := s[:end]
	v = strings.TrimPrefix(v, "\n")
	v = strings.TrimSuffix(v, "\n")
	return v, s[next:], closed
}

func typedValue(v, typ string) []byte {
	t := strings.TrimSpace(v)
	switch typ {
	case "string":
	case "integer", "number":
		if isJSONNumber(t) {
			return []byte(t)
		}
	case "boolean":
		if t == "true" || t == "false" {
			return []byte(t)
		}
	case "object", "array", "":
		if (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") || typ != "") && json.Valid([]byte(t)) {
			return []byte(t)
		}
	}
	var b bytes.Buffer
	writeJSONString(&b, v)
	return b.Bytes()
}

func isJSONNumber(s string) bool {
	var n json.Number
	return s != "" && json.Unmarshal([]byte(s), &n) == nil
}

// argObject writes the JSON arguments of a call a model wrote as named
// values — tagged pairs (GLM, Qwen's XML, MiniMax) or Python keyword
// arguments — in the order written. An empty name is dropped and a name
// written twice keeps its first value: either is a slip of the model, and
// the object must stay valid JSON with one value per key.
type argObject struct {
	tool string
	ts   *Toolset
	buf  bytes.Buffer
	seen map[string]bool
}

func newArgObject(tool string, ts *Toolset) *argObject {
	a := &argObject{tool: tool, ts: ts, seen: map[string]bool{}}
	a.buf.WriteByte('{')
	return a
}

// typed adds a value written as text, typed from the tool's schema
// (typedValue).
func (a *argObject) typed(key, text string) {
	a.raw(key, typedValue(text, a.ts.ParamType(a.tool, key)))
}

// raw adds a value already written as JSON.
func (a *argObject) raw(key string, v []byte) {
	if key == "" || a.seen[key] {
		return
	}
	a.seen[key] = true
	if a.buf.Len() > 1 {
		a.buf.WriteByte(',')
	}
	writeJSONString(&a.buf, key)
	a.buf.WriteByte(':')
	a.buf.Write(v)
}

// json is the object written so far, closed.
func (a *argObject) json() json.RawMessage {
	return json.RawMessage(append(a.buf.Bytes()[:a.buf.Len():a.buf.Len()], '}'))
}

// writeJSONString writes s as a JSON string without HTML escaping, so the
// arguments recorded in history read as the model wrote them.
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode's newline
}
