package engine

import (
	"strings"

	"github.com/mm-agent/mm/engine/detect"
	"github.com/mm-agent/mm/engine/llm"
)

// textCall handles tool calls written as text: run as real calls,
// all of them in order, when they are the whole answer and valid;
// otherwise given back with a note naming the syntax, at most
// MaxTextCallRetries times in a row. Nothing of it is ever shown as the
// answer, and nothing is dropped: what was written either runs or goes
// back to the model.
func (t *turn) textCall(g generation) (end TurnEnd, stop bool, converted []llm.ToolCall) {
	s, c := t.s, g.textCall
	if c.Convertible() {
		ts := s.toolset(true)
		var calls []llm.ToolCall
		for _, tc := range c.Calls {
			r := ts.Resolve(tc.Name, tc.Arguments)
			if r.Unknown {
				calls = nil
				break
			}
			calls = append(calls, llm.ToolCall{Name: r.Name, Arguments: string(r.Args)})
		}
		if calls != nil {
			for i := range calls {
				calls[i].ID = s.nextCallID()
			}
			t.struggle(t.withFix(c, c.Struggle(true)))
			return TurnEnd{}, false, calls
		}
	}
	t.struggle(t.withFix(c, c.Struggle(false)))
	if !t.textCalls.Take() {
		line := "the model kept writing tool calls as text instead of calling them — " + c.ServerFix()
		t.struggle(detect.Struggle{Level: detect.Severe, Kind: detect.KindTextToolCall, Text: "text tool call: written as text again — turn stopped"})
		t.keepPartial(g.content)
		return t.fail(line), true, nil
	}
	// The assistant turn keeps what it said (or what it wrote instead of a
	// call), then the note; roles keep alternating for strict templates.
	said := g.content
	if strings.TrimSpace(said) == "" {
		said = c.Text
	}
	s.append(llm.Message{Role: llm.RoleAssistant, Content: said})
	s.append(llm.Message{Role: llm.RoleUser, Content: c.Note()})
	return TurnEnd{}, false, nil
}

// withFix adds to the user's note, the first time a syntax leaks in this
// session, what to change on the server so it stops: a leak is the
// server's template or parser not matching the model.
func (t *turn) withFix(c *detect.TextCall, st detect.Struggle) detect.Struggle {
	s := t.s
	s.mu.Lock()
	noted := s.fixed[c.Format]
	if s.fixed == nil {
		s.fixed = map[detect.TextCallFormat]bool{}
	}
	s.fixed[c.Format] = true
	s.mu.Unlock()
	if fix := c.ServerFix(); !noted && fix != "" {
		st.Text += " — server fix: " + fix
	}
	return st
}
