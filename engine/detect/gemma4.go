package detect

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Gemma 4 writes its calls in a syntax of its own, defined by its chat
// template (format_argument in the template; vLLM's gemma4 parser reads
// it the same way):
//
//	<|tool_call>call:read_file{path:<|"|>notes.txt<|"|>,start:3}<tool_call|>
//
// Keys are bare, strings are quoted by the <|"|> token, numbers, booleans,
// objects and lists are written as in JSON; several calls follow one
// another with nothing between them.
const (
	gemmaOpen  = "<|tool_call>"
	gemmaClose = "<tool_call|>"
	gemmaQuote = `<|"|>`
)

// probeGemma4: the opener, then call:name{.
func probeGemma4(_, rest string, _ *Toolset, _ bool) int {
	t := strings.TrimLeft(rest, " \t\r\n")
	if len(rest)-len(t) > maxTagSlack {
		return reject
	}
	if isPrefixOf(t, "call:") || t == "" {
		return wait
	}
	name, ok := strings.CutPrefix(t, "call:")
	if !ok {
		return reject
	}
	n := nameLen(name)
	switch {
	case n > maxTagSlack || n == 0 && name != "":
		return reject
	case n == len(name):
		return wait
	case name[n] == '{':
		return commit
	}
	return reject
}

// gemma4End ends a call after the object of its arguments and the
// closing token, when it follows.
func gemma4End(s string, final bool) int {
	return closeAfter(s, gemmaBodyEnd(s), final, gemmaClose)
}

// gemmaBodyEnd is the end of the call's object, -1 while it is open.
func gemmaBodyEnd(s string) int {
	i := strings.IndexByte(s, '{')
	if i < 0 {
		return -1
	}
	return gemmaValueEnd(s, i)
}

// gemmaValueEnd follows brackets from s[i], skipping <|"|> strings, to
// where the value closes; -1 while it does not.
func gemmaValueEnd(s string, i int) int {
	depth := 0
	for k := i; k < len(s); k++ {
		if strings.HasPrefix(s[k:], gemmaQuote) {
			e := strings.Index(s[k+len(gemmaQuote):], gemmaQuote)
			if e < 0 {
				return -1
			}
			k += 2*len(gemmaQuote) + e - 1
			continue
		}
		switch s[k] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return k + 1
			}
		}
	}
	return -1
}

// parseGemma4 reads one call: call:name{…}.
func parseGemma4(s string, _ *Toolset) ([]Call, string) {
	t := strings.TrimLeft(strings.TrimPrefix(s, gemmaOpen), " \t\r\n")
	t = strings.TrimPrefix(t, "call:")
	n := nameLen(t)
	name, body := t[:n], t[n:]
	j := gemmaBodyEnd(body)
	if j < 0 {
		return nil, "the call is unfinished"
	}
	body = body[:j]
	if json.Valid([]byte(body)) {
		// Some builds write the arguments as JSON.
		return one(name, argsObject(json.RawMessage(body))), ""
	}
	p := gemmaParser{s: body}
	v, ok := p.value()
	if p.ws(); !ok || p.i != len(p.s) || len(v) == 0 || v[0] != '{' {
		return nil, "the arguments are not valid"
	}
	return one(name, v), ""
}

// gemmaParser turns Gemma 4's values into JSON.
type gemmaParser struct {
	s string
	i int
}

func (p *gemmaParser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *gemmaParser) eat(c byte) bool {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a <|"|>-quoted string.
func (p *gemmaParser) str() (string, bool) {
	if !strings.HasPrefix(p.s[p.i:], gemmaQuote) {
		return "", false
	}
	p.i += len(gemmaQuote)
	e := strings.Index(p.s[p.i:], gemmaQuote)
	if e < 0 {
		return "", false
	}
	v := p.s[p.i : p.i+e]
	p.i += e + len(gemmaQuote)
	return v, true
}

func (p *gemmaParser) value() ([]byte, bool) {
	p.ws()
	if p.i >= len(p.s) {
		return nil, false
	}
	var b bytes.Buffer
	switch c := p.s[p.i]; {
	case strings.HasPrefix(p.s[p.i:], gemmaQuote):
		v, ok := p.str()
		if !ok {
			return nil, false
		}
		writeJSONString(&b, v)
	case c == '{':
		p.i++
		obj := newArgObject("", nil)
		for n := 0; !p.eat('}'); n++ {
			if n > 0 && !p.eat(',') {
				return nil, false
			}
			key, ok := p.key()
			if !ok || key == "" || !p.eat(':') {
				return nil, false
			}
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			obj.raw(key, v)
		}
		return obj.json(), true
	case c == '[':
		p.i++
		b.WriteByte('[')
		for n := 0; !p.eat(']'); n++ {
			if n > 0 && !p.eat(',') {
				return nil, false
			}
			v, ok := p.value()
			if !ok {
				return nil, false
			}
			if n > 0 {
				b.WriteByte(',')
			}
			b.Write(v)
		}
		b.WriteByte(']')
	default:
		// A bare value: a number, a boolean, null; anything else is a
		// string, as the servers' parsers read it.
		start := p.i
		for p.i < len(p.s) && strings.IndexByte(",}]", p.s[p.i]) < 0 {
			p.i++
		}
		word := strings.TrimSpace(p.s[start:p.i])
		switch {
		case word == "":
			return nil, false
		case word == "true" || word == "false" || word == "null" || isJSONNumber(word):
			b.WriteString(word)
		default:
			writeJSONString(&b, word)
		}
	}
	return b.Bytes(), true
}

// key reads a bare key (or a quoted one: the template quotes keys inside
// nested values).
func (p *gemmaParser) key() (string, bool) {
	p.ws()
	if strings.HasPrefix(p.s[p.i:], gemmaQuote) {
		return p.str()
	}
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != ':' && p.s[p.i] != '}' {
		p.i++
	}
	return strings.Trim(strings.TrimSpace(p.s[start:p.i]), `"`), true
}

// nameLen is the length of the tool name at the start of s.
func nameLen(s string) int {
	n := 0
	for n < len(s) && isName(s[n:n+1]) {
		n++
	}
	return n
}
