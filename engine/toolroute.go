package engine

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/tools"
)

// ToolRoute is what the tool router made of a turn's prompt.
type ToolRoute struct {
	// Hide names the tools not offered for this turn. A router can only
	// take away: a tool it does not name stays, and a name that is not a
	// tool of the session is ignored.
	Hide []string
	// Info is one progress line saying what was done, or why nothing was
	// (🧭 …); empty says nothing.
	Info string
}

// routeTools asks the router, once per turn and after the prompt was
// rewritten (the text the model reads is the text routed), which tools
// this turn can do without, and hides them until the next turn. Without a
// router, or on a turn answered locally, every tool is offered.
func (t *turn) routeTools(ctx context.Context, prompt string) {
	s := t.s
	var hidden map[string]bool
	if r := s.opts.ToolRouter; r != nil && s.opts.Tools != nil {
		route := r(ctx, prompt)
		for _, name := range route.Hide {
			if _, ok := s.opts.Tools.Lookup(name); ok {
				if hidden == nil {
					hidden = map[string]bool{}
				}
				hidden[name] = true
			}
		}
		if route.Info != "" {
			t.emit(Progress{Text: route.Info})
		}
	}
	s.mu.Lock()
	s.hidden = hidden
	s.mu.Unlock()
}

// offered is the tools the model is offered now: the registry's, in its
// order, less those hidden for this turn.
func (s *Session) offered() []tools.Tool {
	all := s.opts.Tools.Tools()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.hidden) == 0 {
		return all
	}
	out := make([]tools.Tool, 0, len(all))
	for _, tl := range all {
		if !s.hidden[tl.Name()] {
			out = append(out, tl)
		}
	}
	return out
}

// unhide offers again, for the rest of the turn, a hidden tool the model
// called anyway (it saw the tool in an earlier turn): the call is the
// best evidence the router was wrong, and the tool is the operator's
// own, so it runs like any other call rather than failing the turn. The
// price is one broken prompt-cache prefix, said in one 🧭 line.
func (t *turn) unhide(calls []llm.ToolCall) {
	s := t.s
	s.mu.Lock()
	none := len(s.hidden) == 0
	s.mu.Unlock()
	if none {
		return
	}
	full := toolsetOf(s.opts.Tools.Tools())
	var back []string
	s.mu.Lock()
	for _, c := range calls {
		r := full.Resolve(c.Name, json.RawMessage(c.Arguments))
		if !r.Unknown && s.hidden[r.Name] {
			delete(s.hidden, r.Name)
			back = append(back, r.Name)
		}
	}
	s.mu.Unlock()
	if len(back) > 0 {
		sort.Strings(back)
		t.emit(Progress{Text: "🧭 the model called " + strings.Join(back, ", ") + ", which tool routing had hidden for this turn — offered again"})
	}
}
