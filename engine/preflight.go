package engine

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/tools"
)

// preflight watches tool-call arguments while they stream and runs a
// tool's Preflight as soon as the "path" argument is complete: a
// write to a file the model has not read is refused before the model
// spends minutes decoding its content.
type preflight struct {
	reg   *tools.Registry
	env   tools.Env
	calls map[int]*streamingCall
}

type streamingCall struct {
	id, name string
	args     strings.Builder
	path     pathScanner
	checked  bool
}

// refused is the error that stops the generation when a preflight refuses.
type refused struct {
	id, name, path, text string
}

func (r *refused) Error() string { return "preflight refused " + r.name + " " + r.path }

func newPreflight(reg *tools.Registry, env tools.Env) *preflight {
	return &preflight{reg: reg, env: env, calls: map[int]*streamingCall{}}
}

// feed takes one tool-call delta; it returns a *refused error to abort the
// stream.
func (p *preflight) feed(ctx context.Context, d *llm.ToolCallDelta) error {
	c := p.calls[d.Index]
	if c == nil {
		c = &streamingCall{}
		p.calls[d.Index] = c
	}
	if d.ID != "" {
		c.id = d.ID
	}
	if d.Name != "" {
		c.name = d.Name
	}
	c.args.WriteString(d.Args)
	if c.checked || p.env == nil {
		return nil
	}
	tool, ok := p.reg.Lookup(c.name)
	if !ok {
		return nil
	}
	pf, ok := tool.(tools.Preflighter)
	if !ok {
		c.checked = true
		return nil
	}
	path, done := c.path.scan(c.args.String())
	if !done {
		return nil
	}
	c.checked = true
	if path == "" {
		return nil // no path argument: Run reports the schema error
	}
	if text := pf.Preflight(ctx, p.env, path); text != "" {
		return &refused{id: c.id, name: c.name, path: path, text: text}
	}
	return nil
}

// completePath reads the top-level "path" of partial JSON arguments. done
// is true once the value is complete, or once it is certain there is no
// path (the object ended, the arguments are not an object, or path is not
// a string).
func completePath(partial string) (path string, done bool) {
	var sc pathScanner
	return sc.scan(partial)
}

// pathScanner finds the top-level "path" of JSON arguments as they
// stream, reading each byte once. Parsing the whole prefix again at each
// delta was quadratic: arguments whose path comes after a 100 KB content
// (keys in alphabetical order, as some models and the JSON encoders of
// others write them) cost seconds of CPU while they streamed.
type pathScanner struct {
	pos       int // bytes of the arguments read so far
	depth     int // 0 before the opening brace, 1 inside the top object
	started   bool
	inString  bool
	escaped   bool
	strStart  int    // offset of the current string's opening quote
	expectKey bool   // at depth 1, the next string is a key
	key       string // the top-level key whose value is being read
}

// scan reads what arrived since the last call: args is the whole of the
// arguments so far, each call's a prefix of the next one's.
func (s *pathScanner) scan(args string) (path string, done bool) {
	for ; s.pos < len(args); s.pos++ {
		c := args[s.pos]
		if s.inString {
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
				if s.depth != 1 {
					continue
				}
				raw := []byte(args[s.strStart : s.pos+1])
				if s.expectKey {
					s.key = ""
					_ = json.Unmarshal(raw, &s.key)
					continue
				}
				if s.key == "path" {
					s.pos++
					if json.Unmarshal(raw, &path) != nil {
						return "", true
					}
					return path, true
				}
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		if !s.started {
			if c != '{' {
				return "", true // not an object
			}
			s.started, s.depth, s.expectKey = true, 1, true
			continue
		}
		if s.depth == 1 && !s.expectKey && s.key == "path" && c != ':' && c != '"' {
			return "", true // path is not a string
		}
		switch c {
		case '"':
			s.inString, s.strStart = true, s.pos
		case '{', '[':
			s.depth++
		case '}', ']':
			s.depth--
			if s.depth == 0 {
				return "", true // the object ended without a path
			}
		case ':':
			if s.depth == 1 {
				s.expectKey = false
			}
		case ',':
			if s.depth == 1 {
				s.expectKey, s.key = true, ""
			}
		}
	}
	return "", false
}
