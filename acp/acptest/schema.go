package acptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// The official ACP JSON schema is reference data, not part of the
// repository: it is read from the npm package of the protocol's SDK,
// folder schema/v1, which scripts/test installs (into the Go path's
// pkg/mm-test-tools) and names in [SchemaEnv]. Without the variable the
// schema is looked for there and in npm's global packages.
const (
	// SchemaEnv names the folder that holds schema.json and
	// schema.unstable.json.
	SchemaEnv = "MM_ACP_SCHEMA"
	// SchemaPackage and SchemaVersion are the npm package the schema comes
	// from and the release the tests are written against.
	SchemaPackage = "@agentclientprotocol/sdk"
	SchemaVersion = "2.4.0"
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
	schemaDir = sync.OnceValues(findSchema)
	unstable  = sync.OnceValues(func() (*Schema, error) { return loadSchema("schema.unstable.json") })
	stable    = sync.OnceValues(func() (*Schema, error) { return loadSchema("schema.json") })
)

// Unstable is the whole schema, stable and unstable methods: the one
// messages are checked against. It is nil when the schema is not
// installed: then t fails under CI (MM_REQUIRE_INTEGRATION=1), and
// otherwise is told once, in its log, that the check is skipped.
func Unstable(t testing.TB) *Schema {
	t.Helper()
	return edition(t, unstable)
}

// Stable is the stable part of the schema alone; nil as for [Unstable].
func Stable(t testing.TB) *Schema {
	t.Helper()
	return edition(t, stable)
}

func edition(t testing.TB, load func() (*Schema, error)) *Schema {
	t.Helper()
	s, err := load()
	if err != nil {
		unavailable(t, err)
	}
	return s
}

// told holds the tests (top-level names) already told that the schema
// is missing.
var told sync.Map

// unavailable fails t under CI, where a check that did not run must not
// pass, and otherwise logs why the schema check is skipped: each once
// per test, its subtests included.
func unavailable(t testing.TB, err error) {
	t.Helper()
	test, _, _ := strings.Cut(t.Name(), "/")
	if _, done := told.LoadOrStore(test, true); done {
		return
	}
	if os.Getenv("MM_REQUIRE_INTEGRATION") == "1" {
		t.Errorf("acptest: %v", err)
		return
	}
	t.Logf("acptest: %v; the checks against the schema are skipped", err)
}

// loadSchema reads one edition from the installed schema folder.
func loadSchema(name string) (*Schema, error) {
	dir, err := schemaDir()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("read the ACP schema: %w", err)
	}
	s, err := parseSchema(data)
	if err != nil {
		return nil, fmt.Errorf("the ACP schema %s: %w", filepath.Join(dir, name), err)
	}
	return s, nil
}

var errNoSchema = errors.New("the ACP schema is not installed")

// findSchema returns the folder of the schema: [SchemaEnv]'s, or the
// schema/v1 folder of SchemaPackage at SchemaVersion where scripts/test
// installs it or among npm's global packages.
func findSchema() (string, error) {
	if dir := os.Getenv(SchemaEnv); dir != "" {
		err := holdsSchema(dir)
		// In the package's own folder, its version is checked too.
		if v, verr := packageVersion(filepath.Join(dir, "..", "..")); err == nil && verr == nil && v != SchemaVersion {
			err = fmt.Errorf("version %s of the package", v)
		}
		if err != nil {
			return "", fmt.Errorf("%w: %s=%s holds %v — point it at the schema/v1 folder of %s@%s, or unset it and run ./scripts/test",
				errNoSchema, SchemaEnv, dir, err, SchemaPackage, SchemaVersion)
		}
		return dir, nil
	}
	var others []string
	for _, modules := range nodeModules() {
		pkg := filepath.Join(modules, filepath.FromSlash(SchemaPackage))
		v, err := packageVersion(pkg)
		if err != nil {
			continue
		}
		dir := filepath.Join(pkg, "schema", "v1")
		if v != SchemaVersion {
			others = append(others, v+" in "+modules)
		} else if holdsSchema(dir) == nil {
			return dir, nil
		}
	}
	found := ""
	if len(others) > 0 {
		found = " (found " + strings.Join(others, ", ") + ")"
	}
	want := SchemaPackage + "@" + SchemaVersion
	return "", fmt.Errorf("%w: %s%s — run ./scripts/test, or npm install -g %s, or set %s to its schema/v1 folder",
		errNoSchema, want, found, want, SchemaEnv)
}

// holdsSchema reports whether dir has both editions of the schema.
func holdsSchema(dir string) error {
	for _, name := range []string{"schema.json", "schema.unstable.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("no %s", name)
		}
	}
	return nil
}

func packageVersion(pkg string) (string, error) {
	b, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return "", err
	}
	var p struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return "", err
	}
	return p.Version, nil
}

// nodeModules are the node_modules folders the schema may be installed
// in: scripts/test's, under the Go path, then npm's global one.
func nodeModules() []string {
	var out []string
	if gopath := output("go", "env", "GOPATH"); gopath != "" {
		out = append(out, filepath.Join(filepath.SplitList(gopath)[0], "pkg", "mm-test-tools", "node_modules"))
	}
	if root := output("npm", "root", "-g"); root != "" {
		out = append(out, root)
	}
	return out
}

// output is what a command prints, trimmed; "" when it fails or takes
// longer than a few seconds.
func output(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// parseSchema reads a schema file and indexes its methods' types.
func parseSchema(data []byte) (*Schema, error) {
	var root struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	if len(root.Defs) == 0 {
		return nil, errors.New("no $defs")
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
	return s, nil
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
// invalid message and returns how many were checked. When the schema is
// not installed ([Unstable] is nil), only what needs no schema is
// checked — every line is JSON, every answer answers a request the editor
// sent, an extension method's answer is an object — and the messages so
// checked are counted.
func CheckSchema(t testing.TB, sent, received string) int {
	t.Helper()
	s := Unstable(t)
	asked := map[string]string{} // editor request id → method
	for _, m := range messages(t, sent) {
		if m.Method != "" && len(m.ID) > 0 {
			asked[string(m.ID)] = m.Method
		}
	}
	n := 0
	for _, m := range messages(t, received) {
		method, kind, body := m.Method, "", m.Result
		switch {
		case m.Method != "" && len(m.ID) == 0:
			kind, body = "Notification", m.Params
		case m.Method != "":
			kind, body = "Request", m.Params
		case len(m.Error) > 0:
			body = m.Error
		default:
			method = asked[string(m.ID)]
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
			kind = "Response"
		}
		if s != nil {
			typ := "Error"
			if kind != "" {
				typ = s.Type(method, kind)
			}
			if typ == "" {
				t.Errorf("the agent wrote a message the schema has no type for: method %q id %s", m.Method, m.ID)
				continue
			}
			if err := s.Validate(typ, body); err != nil {
				t.Errorf("invalid %s: %v\n%s", typ, err, body)
			}
		}
		n++
	}
	return n
}
