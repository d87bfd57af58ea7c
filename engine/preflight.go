package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/tools"
)

// preflight watches tool-call arguments while they stream and runs a
// tool's Preflight as soon as the "path" argument is complete (T5): a
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
	path, done := completePath(c.args.String())
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
// path (the object ended, or the arguments are not an object).
func completePath(partial string) (path string, done bool) {
	dec := json.NewDecoder(strings.NewReader(partial))
	tok, err := dec.Token()
	if err != nil {
		return "", !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && strings.TrimSpace(partial) != ""
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return "", true
	}
	for {
		key, err := dec.Token()
		if err != nil {
			return "", false
		}
		if d, ok := key.(json.Delim); ok && d == '}' {
			return "", true
		}
		if key == "path" {
			v, err := dec.Token()
			if err != nil {
				return "", false
			}
			s, _ := v.(string)
			return s, true
		}
		if err := skipValue(dec); err != nil {
			return "", false
		}
	}
}

// skipValue consumes one JSON value, nested or not.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}
