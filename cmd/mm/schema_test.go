package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mm-agent/mm/internal/testenv"
)

// The official ACP schema (2026-11, stable and unstable) lives beside the
// project, not in it: ../shared/acp-schema/schema.unstable.json. Every
// message mm writes is checked against the type its method names —
// session/update as SessionNotification, answers by the method of the
// request they answer, mm's own requests by their params type.

var acpSchema struct {
	once sync.Once
	defs map[string]json.RawMessage
	// kinds maps a method to its Request/Response/Notification types.
	kinds map[string]map[string]string
	err   string
	cache sync.Map // type name → *jsonschema.Resolved
}

// schemaDefs loads the schema's definitions once, or says why not.
func schemaDefs(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	acpSchema.once.Do(func() {
		wd, _ := os.Getwd()
		var data []byte
		for dir := wd; ; dir = filepath.Dir(dir) {
			b, err := os.ReadFile(filepath.Join(dir, "shared", "acp-schema", "schema.unstable.json"))
			if err == nil {
				data = b
				break
			}
			if filepath.Dir(dir) == dir {
				acpSchema.err = "no shared/acp-schema/schema.unstable.json above " + wd
				return
			}
		}
		var root struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(data, &root); err != nil {
			acpSchema.err = err.Error()
			return
		}
		acpSchema.defs = root.Defs
		acpSchema.kinds = map[string]map[string]string{}
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
					if acpSchema.kinds[d.Method] == nil {
						acpSchema.kinds[d.Method] = map[string]string{}
					}
					acpSchema.kinds[d.Method][kind] = name
				}
			}
		}
	})
	if acpSchema.err != "" {
		testenv.Unavailable(t, "the ACP schema is not part of the project: %s", acpSchema.err)
	}
	return acpSchema.defs
}

// schemaOf is the resolved schema of one definition.
func schemaOf(t *testing.T, name string) *jsonschema.Resolved {
	t.Helper()
	if r, ok := acpSchema.cache.Load(name); ok {
		return r.(*jsonschema.Resolved)
	}
	defs := schemaDefs(t)
	if _, ok := defs[name]; !ok {
		t.Fatalf("the schema has no type %s", name)
	}
	// Only the definitions the type reaches: resolving all of the
	// schema's for each type cost a second of CPU a type under -race.
	doc, _ := json.Marshal(map[string]any{"$ref": "#/$defs/" + name, "$defs": reachable(defs, name)})
	var s jsonschema.Schema
	if err := json.Unmarshal(doc, &s); err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	acpSchema.cache.Store(name, r)
	return r
}

// reachable is name's definition and every definition its $refs reach.
func reachable(defs map[string]json.RawMessage, name string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	todo := []string{name}
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		raw, ok := defs[n]
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

var refPattern = regexp.MustCompile(`"\$ref"\s*:\s*"#/\$defs/([^"]+)"`)

// wire is one JSON-RPC message as written on a stream.
type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func wireLines(t *testing.T, stream string) []wire {
	t.Helper()
	var out []wire
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m wire
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("not JSON on the wire: %q", sc.Text())
			continue
		}
		out = append(out, m)
	}
	return out
}

// checkSchema validates every message mm wrote (fromMM) against the ACP
// schema; sent is what the client wrote, to know which method each
// answer answers. It returns how many messages were checked, and reports
// each invalid one.
func checkSchema(t *testing.T, sent, fromMM string) int {
	t.Helper()
	schemaDefs(t)
	asked := map[string]string{} // client request id → method
	for _, m := range wireLines(t, sent) {
		if m.Method != "" && len(m.ID) > 0 {
			asked[string(m.ID)] = m.Method
		}
	}
	n := 0
	for _, m := range wireLines(t, fromMM) {
		var typ string
		var body json.RawMessage
		switch {
		case m.Method != "" && len(m.ID) == 0:
			typ, body = acpSchema.kinds[m.Method]["Notification"], m.Params
		case m.Method != "":
			typ, body = acpSchema.kinds[m.Method]["Request"], m.Params
		case len(m.Error) > 0:
			typ, body = "Error", m.Error
		default:
			method := asked[string(m.ID)]
			if method == "" {
				t.Errorf("an answer to id %s, which the client never sent", m.ID)
				continue
			}
			if strings.HasPrefix(method, "_") {
				// An extension method (_session/steering): the schema
				// has no type for it; its test checks its shape.
				if len(m.Result) == 0 || m.Result[0] != '{' {
					t.Errorf("the answer to %s is not an object: %s", method, m.Result)
				}
				n++
				continue
			}
			typ, body = acpSchema.kinds[method]["Response"], m.Result
		}
		if typ == "" {
			t.Errorf("mm wrote a message the schema has no type for: method %q id %s", m.Method, m.ID)
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("%s: %v", typ, err)
			continue
		}
		if err := schemaOf(t, typ).Validate(v); err != nil {
			t.Errorf("invalid %s: %v\n%s", typ, err, body)
		}
		n++
	}
	return n
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
