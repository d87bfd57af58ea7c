package tools

import (
	"fmt"
	"sort"
	"strings"
)

// Registry holds the tools offered to the model, sorted by name.
type Registry struct {
	byName map[string]Tool
	sorted []Tool
}

// NewRegistry returns a registry of the given tools. It panics on a
// duplicate name: that is a programming error in the composition root.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{byName: make(map[string]Tool, len(ts))}
	for _, t := range ts {
		if _, dup := r.byName[t.Name()]; dup {
			panic(fmt.Sprintf("tools: duplicate tool %q", t.Name()))
		}
		r.byName[t.Name()] = t
		r.sorted = append(r.sorted, t)
	}
	sort.Slice(r.sorted, func(i, j int) bool { return r.sorted[i].Name() < r.sorted[j].Name() })
	return r
}

// Tools returns the tools sorted by name (a stable request prefix).
func (r *Registry) Tools() []Tool {
	if r == nil {
		return nil
	}
	return r.sorted
}

// Lookup finds a tool by exact name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	if r == nil {
		return nil, false
	}
	t, ok := r.byName[name]
	return t, ok
}

// Names lists the tool names, sorted, for "your tools are: …" messages.
func (r *Registry) Names() string {
	names := make([]string, 0, len(r.Tools()))
	for _, t := range r.Tools() {
		names = append(names, t.Name())
	}
	return strings.Join(names, ", ")
}

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}
