package detect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// ToolInfo is one tool offered to the model this turn.
type ToolInfo struct {
	Name   string
	Schema json.RawMessage // the JSON schema of its arguments; may be nil
}

// Toolset is what the detectors know of the tools offered this turn: their
// names, the top-level parameters and types of their schemas, and the
// aliases that lead to them. Build one per request (the offered tools can
// change between calls: none for the last-chance summary, where nothing
// the model writes is a call).
//
// A Toolset is immutable once built and safe for concurrent reads.
type Toolset struct {
	names  []string
	params map[string]*schema
}

// schema is the little of a JSON schema the detectors use.
type schema struct {
	Type       json.RawMessage    `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	Required   []string           `json:"required"`
}

// typ returns the schema's type, or "" when absent or a list of types.
func (s *schema) typ() string {
	var t string
	if s == nil || json.Unmarshal(s.Type, &t) != nil {
		return ""
	}
	return t
}

// NewToolset builds the toolset of the given tools. A schema that does not
// parse only loses its parameters (aliases of arguments are then not
// applied); a duplicate name keeps the first.
func NewToolset(tools ...ToolInfo) *Toolset {
	ts := &Toolset{params: make(map[string]*schema, len(tools))}
	for _, t := range tools {
		if _, dup := ts.params[t.Name]; dup || t.Name == "" {
			continue
		}
		s := new(schema)
		if json.Unmarshal(t.Schema, s) != nil {
			s = new(schema)
		}
		ts.params[t.Name] = s
		ts.names = append(ts.names, t.Name)
	}
	sort.Strings(ts.names)
	return ts
}

// Names lists the offered tools, sorted.
func (ts *Toolset) Names() []string {
	if ts == nil {
		return nil
	}
	return slices.Clone(ts.names)
}

// Len is the number of offered tools; 0 means the model may not call any.
func (ts *Toolset) Len() int {
	if ts == nil {
		return 0
	}
	return len(ts.names)
}

// Has reports whether name is offered, exactly.
func (ts *Toolset) Has(name string) bool {
	if ts == nil {
		return false
	}
	_, ok := ts.params[name]
	return ok
}

// Known reports whether name is offered or an alias of an offered tool.
func (ts *Toolset) Known(name string) bool {
	_, ok := ts.target(name)
	return ok
}

// ParamType is the JSON schema type of a top-level parameter ("string",
// "integer", "object"…), or "" when unknown.
func (ts *Toolset) ParamType(tool, param string) string {
	if ts == nil {
		return ""
	}
	s := ts.params[tool]
	if s == nil {
		return ""
	}
	return s.Properties[param].typ()
}

// Missing is the first argument the tool's schema requires that args (a
// JSON object, aliases already applied) lacks; "" when none is.
func (ts *Toolset) Missing(tool string, args json.RawMessage) string {
	if ts == nil || ts.params[tool] == nil {
		return ""
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, r := range ts.params[tool].Required {
		if _, ok := m[r]; !ok {
			return r
		}
	}
	return ""
}

// toolAliases are tool names small models learned from other agents
// (OpenFox, Claude Code, Cline, Gemini CLI, Anthropic's text editor tool),
// mapped to ours. Data, not a switch: a new alias is one line.
var toolAliases = map[string]string{
	"shell":             "bash",
	"run":               "bash",
	"run_command":       "bash",
	"execute":           "bash",
	"execute_command":   "bash",
	"run_shell_command": "bash",
	"str_replace":       "edit_file",
	"apply_edit":        "edit_file",
	"edit":              "edit_file",
	"read":              "read_file",
	"view_file":         "read_file",
	"write":             "write_file",
	"create_file":       "write_file",
}

// argAliases are argument names from the same agents, mapped to ours. They
// apply only when the tool has the target parameter and not the alias.
// `cmd` for `command` is deliberately absent: the tool gives it back
// as a schema error with the expected shape, which teaches the model.
var argAliases = map[string]string{
	"file_path":  "path",
	"filepath":   "path",
	"old_string": "old",
	"old_str":    "old",
	"new_string": "new",
	"new_str":    "new",
}

func (ts *Toolset) target(name string) (string, bool) {
	if ts.Has(name) {
		return name, true
	}
	if t, ok := toolAliases[name]; ok && ts.Has(t) {
		return t, true
	}
	return "", false
}

// Resolution is what Resolve decided about one call.
type Resolution struct {
	// Name and Args are the call to run and to record in history (the
	// model rereads the call as executed). Args is the input unchanged
	// unless an argument alias applied.
	Name string
	Args json.RawMessage
	// Renamed: Name is the target of an alias; ArgsChanged: arguments
	// were renamed or regrouped.
	Renamed, ArgsChanged bool
	// Unknown: no offered tool has this name or alias. Do not run
	// anything; give Note back as the tool result.
	Unknown bool
	Note    string
}

// Resolve maps a call onto the offered tools: an offered name is
// kept, a known alias is translated when its target is offered this turn,
// and anything else is unknown, with the note listing the real tools.
// Arguments are repaired only for a call that resolves: alias keys renamed
// (file_path → path) and, for a tool taking a list of objects (edit_file's
// edits), loose item fields gathered into one item ({path, old, new} →
// {path, edits:[{old, new}]}). Args that are not a JSON object are passed
// through untouched; the tool's own decoding reports them.
func (ts *Toolset) Resolve(name string, args json.RawMessage) Resolution {
	t, ok := ts.target(name)
	if !ok {
		return Resolution{Name: name, Args: args, Unknown: true, Note: ts.UnknownTool(name)}
	}
	r := Resolution{Name: t, Args: args, Renamed: t != name}
	if fixed, changed := ts.params[t].repair(args); changed {
		r.Args, r.ArgsChanged = fixed, true
	}
	return r
}

// UnknownTool is the model-facing text for a tool that does not exist.
func (ts *Toolset) UnknownTool(name string) string {
	if ts.Len() == 0 {
		return fmt.Sprintf("[error: there is no tool named %q; no tools are available now — answer in text]", name)
	}
	return fmt.Sprintf("[error: there is no tool named %q; your tools are: %s]", name, list(ts.names))
}

// UnknownToolStruggle is the warning shown to the user for an invented tool.
func UnknownToolStruggle(name string) Struggle {
	return Struggle{Warning, KindUnknownTool, fmt.Sprintf("unknown tool: the model called %q — told which tools exist", clip(name, 40))}
}

// repair applies the argument aliases of s to args.
func (s *schema) repair(args json.RawMessage) (json.RawMessage, bool) {
	if s == nil || len(s.Properties) == 0 {
		return args, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return args, false
	}
	changed := renameKeys(m, s.Properties)
	// Loose item fields: {path, old, new} for {path, edits:[{old,new}]}.
	for _, p := range sortedKeys(s.Properties) {
		ps := s.Properties[p]
		if _, present := m[p]; present || ps.typ() != "array" || ps.Items == nil || len(ps.Items.Properties) == 0 {
			continue
		}
		item := map[string]json.RawMessage{}
		for _, k := range sortedKeys(m) {
			c := canonicalArg(k, ps.Items.Properties)
			_, top := s.Properties[k]
			_, inItem := ps.Items.Properties[c]
			if top || !inItem {
				continue
			}
			if _, dup := item[c]; !dup {
				item[c] = m[k]
				delete(m, k)
			}
		}
		if len(item) > 0 {
			m[p] = marshal([]map[string]json.RawMessage{item})
			changed = true
		}
	}
	// Items of object lists: edits:[{old_string, new_string}].
	for _, p := range sortedKeys(s.Properties) {
		ps := s.Properties[p]
		if ps.typ() != "array" || ps.Items == nil || len(ps.Items.Properties) == 0 || m[p] == nil {
			continue
		}
		var items []map[string]json.RawMessage
		if json.Unmarshal(m[p], &items) != nil {
			continue
		}
		itemChanged := false
		for _, it := range items {
			if it != nil && renameKeys(it, ps.Items.Properties) {
				itemChanged = true
			}
		}
		if itemChanged {
			m[p] = marshal(items)
			changed = true
		}
	}
	if !changed {
		return args, false
	}
	return marshal(m), true
}

// marshal encodes maps of raw JSON, which cannot fail, without escaping
// <, > and &: the arguments recorded in history read as the model wrote
// them.
func marshal(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n"))
}

// canonicalArg is the name k stands for among props: itself, or the
// target of its alias when props has the target and not k.
func canonicalArg(k string, props map[string]*schema) string {
	if _, ok := props[k]; ok {
		return k
	}
	if t, ok := argAliases[k]; ok {
		if _, ok := props[t]; ok {
			return t
		}
	}
	return k
}

// renameKeys renames alias keys of m in place; a key whose target is
// already present is left alone (the tool will say which one is unknown).
func renameKeys(m map[string]json.RawMessage, props map[string]*schema) bool {
	changed := false
	for _, k := range sortedKeys(m) {
		t := canonicalArg(k, props)
		if t == k {
			continue
		}
		if _, taken := m[t]; taken {
			continue
		}
		m[t] = m[k]
		delete(m, k)
		changed = true
	}
	return changed
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
