package acptest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The official ACP schema, copied unchanged (testdata/README.md).
var (
	//go:embed testdata/schema.unstable.json
	unstableJSON []byte
	//go:embed testdata/schema.json
	stableJSON []byte
)

// Schema is one edition of the ACP JSON schema: its type definitions and
// which of them each method names.
type Schema struct {
	defs map[string]json.RawMessage
	// types maps a method to its "Request", "Response" and
	// "Notification" type names.
	types    map[string]map[string]string
	resolved sync.Map // type name → *jsonschema.Resolved
}

var (
	unstable = sync.OnceValue(func() *Schema { return parseSchema(unstableJSON) })
	stable   = sync.OnceValue(func() *Schema { return parseSchema(stableJSON) })
)

// Unstable is the whole schema, stable and unstable methods: the one
// messages are checked against.
func Unstable() *Schema { return unstable() }

// Stable is the stable part of the schema alone.
func Stable() *Schema { return stable() }

// parseSchema reads an embedded schema; the copy is the package's own
// file, so one that does not parse is the package's bug.
func parseSchema(data []byte) *Schema {
	var root struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		panic(fmt.Sprintf("acptest: the embedded ACP schema does not parse: %v", err))
	}
	s := &Schema{defs: root.Defs, types: map[string]map[string]string{}}
	for name, raw := range root.Defs {
		var d struct {
			Method string `json:"x-method"`
		}
		json.Unmarshal(raw, &d)
		if d.Method == "" {
			continue
		}
		for _, kind := range []string{"Request", "Response", "Notification"} {
			if strings.HasSuffix(name, kind) {
				if s.types[d.Method] == nil {
					s.types[d.Method] = map[string]string{}
				}
				s.types[d.Method][kind] = name
			}
		}
	}
	return s
}

// Defs are the schema's type definitions by name.
func (s *Schema) Defs() map[string]json.RawMessage { return s.defs }

// Methods are the methods the schema names, sorted.
func (s *Schema) Methods() []string {
	out := make([]string, 0, len(s.types))
	for m := range s.types {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// Type is the name of the type of method's kind ("Request", "Response"
// or "Notification"), "" when the schema has none.
func (s *Schema) Type(method, kind string) string { return s.types[method][kind] }

// Validate checks body, a JSON value, against the type typ.
func (s *Schema) Validate(typ string, body json.RawMessage) error {
	r, err := s.resolve(typ)
	if err != nil {
		return err
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("%s: %w", typ, err)
	}
	return r.Validate(v)
}

func (s *Schema) resolve(typ string) (*jsonschema.Resolved, error) {
	if r, ok := s.resolved.Load(typ); ok {
		return r.(*jsonschema.Resolved), nil
	}
	if _, ok := s.defs[typ]; !ok {
		return nil, fmt.Errorf("the schema has no type %s", typ)
	}
	// Only the definitions the type reaches: resolving all of the
	// schema's for each type costs a second of CPU a type under -race.
	doc, _ := json.Marshal(map[string]any{"$ref": "#/$defs/" + typ, "$defs": s.reachable(typ)})
	var js jsonschema.Schema
	if err := json.Unmarshal(doc, &js); err != nil {
		return nil, fmt.Errorf("schema %s: %w", typ, err)
	}
	r, err := js.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", typ, err)
	}
	s.resolved.Store(typ, r)
	return r, nil
}

var refPattern = regexp.MustCompile(`"\$ref"\s*:\s*"#/\$defs/([^"]+)"`)

// reachable is name's definition and every definition its $refs reach.
func (s *Schema) reachable(name string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	todo := []string{name}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		raw, ok := s.defs[n]
		if _, seen := out[n]; seen || !ok {
			continue
		}
		out[n] = raw
		for _, m := range refPattern.FindAllSubmatch(raw, -1) {
			todo = append(todo, string(m[1]))
		}
	}
	return out
}

// message is one JSON-RPC message as written on a stream.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// messages are the JSON-RPC messages of a stream, with their raw parts;
// a line that is not JSON is reported (Messages).
func messages(t testing.TB, stream string) []message {
	t.Helper()
	var out []message
	for _, msg := range Messages(t, stream) {
		var m message
		json.Unmarshal([]byte(msg.Line), &m)
		out = append(out, m)
	}
	return out
}

// CheckSchema validates every message of received, what the agent wrote,
// against the type its method names in the [Unstable] schema: a
// notification or request by its own method, an answer by the method of
// the request it answers (sent, what the editor wrote, says which), an
// error as Error. An answer to an extension method (its name starts with
// "_") must be an object: the schema has no type for it. It reports each
// invalid message and returns how many were checked.
func CheckSchema(t testing.TB, sent, received string) int {
	t.Helper()
	s := Unstable()
	asked := map[string]string{} // editor request id → method
	for _, m := range messages(t, sent) {
		if m.Method != "" && len(m.ID) > 0 {
			asked[string(m.ID)] = m.Method
		}
	}
	n := 0
	for _, m := range messages(t, received) {
		typ, body := "", m.Result
		switch {
		case m.Method != "" && len(m.ID) == 0:
			typ, body = s.Type(m.Method, "Notification"), m.Params
		case m.Method != "":
			typ, body = s.Type(m.Method, "Request"), m.Params
		case len(m.Error) > 0:
			typ, body = "Error", m.Error
		default:
			method := asked[string(m.ID)]
			if method == "" {
				t.Errorf("an answer to id %s, which the editor never sent", m.ID)
				continue
			}
			if strings.HasPrefix(method, "_") {
				if len(m.Result) == 0 || m.Result[0] != '{' {
					t.Errorf("the answer to %s is not an object: %s", method, m.Result)
				}
				n++
				continue
			}
			typ = s.Type(method, "Response")
		}
		if typ == "" {
			t.Errorf("the agent wrote a message the schema has no type for: method %q id %s", m.Method, m.ID)
			continue
		}
		if err := s.Validate(typ, body); err != nil {
			t.Errorf("invalid %s: %v\n%s", typ, err, body)
		}
		n++
	}
	return n
}
