package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mm-agent/mm/acp/acptest"
)

// TestACPPageListsTheSurface keeps the ACP table of docs/acp.md true: it
// lists every agent method, update kind and capability of the schema (and
// mm's extension methods), each with the schema's stability (stable when
// the stable schema has it); a method marked "not served" answers -32601
// and every other one does not; a capability of mm's marked "not
// advertised" is absent from initialize's answer and every other one is
// there.
func TestACPPageListsTheSurface(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "acp.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| (stable|unstable|extension) \\| (.+) \\|$")
	listed := map[string]acpRow{}
	for _, m := range row.FindAllStringSubmatch(string(page), -1) {
		listed[m[1]] = acpRow{m[2], m[3]}
	}
	if len(listed) < 10 {
		t.Fatalf("the ACP table of docs/acp.md has %d rows", len(listed))
	}
	// Without the schema (Unstable said why), the table is held to
	// initialize's answer and to mm's extension methods alone.
	var defs map[string]json.RawMessage
	var methods map[string]string
	if schema, stable := acptest.Unstable(t), acptest.Stable(t); schema != nil && stable != nil {
		defs = schema.Defs()
		methods = checkRowsAgainstSchema(t, listed, schema, stable)
	}

	dir := t.TempDir()
	r := serveWire(t, dir, mmEnv(t, nil))
	init := r.Initialize(`{}`)
	var answer struct {
		Caps map[string]any `json:"agentCapabilities"`
	}
	json.Unmarshal(init.Result, &answer)
	for name, e := range listed {
		path, ok := strings.CutPrefix(name, "agentCapabilities.")
		if !ok {
			continue
		}
		var v any = answer.Caps
		for _, p := range strings.Split(path, ".") {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		on := v != nil && v != false
		if off := strings.HasPrefix(e.text, "not advertised"); on == off {
			t.Errorf("%s: docs/acp.md says %q, initialize answered %v", name, e.text, v)
		}
	}
	for name, e := range listed {
		if methods[name] == "" && !strings.HasPrefix(name, "_") || name == "initialize" || name == "session/cancel" {
			continue
		}
		if _, ok := methods[name]; ok {
			var d struct {
				Side string `json:"x-side"`
			}
			json.Unmarshal(defs[methods[name]], &d)
			if d.Side != "agent" {
				continue // mm calls it; the editor answers it
			}
		}
		// Params that pass the SDK's checks, so that what answers is mm
		// (the SDK checks a method's params before it looks for it).
		a := r.Call(name, name, json.RawMessage(anyParams))
		missing := a.Error != nil && a.Error.Code == -32601
		if served := !strings.HasPrefix(e.text, "not served"); served == missing {
			t.Errorf("%s: docs/acp.md says %q, mm answered %s", name, e.text, a.Line)
		}
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
}

// acpRow is a row of docs/acp.md's table: a stability and what mm does.
type acpRow struct{ stability, text string }

// checkRowsAgainstSchema holds the table's rows to the schema: every agent
// method, update kind and capability listed, each with its stability. It
// returns the methods an agent or the protocol serves, with their request
// types.
func checkRowsAgainstSchema(t *testing.T, listed map[string]acpRow, schema, stableSchema *acptest.Schema) map[string]string {
	t.Helper()
	defs, stable := schema.Defs(), stableSchema.Defs()
	methods := map[string]string{}
	stableUpdates := map[string]bool{}
	for _, k := range updateKinds(stable["SessionUpdate"]) {
		stableUpdates[k] = true
	}
	want := map[string]string{} // what the table must list, and its stability
	must := map[string]bool{}   // listed because the schema has it (not mm's choice)
	for _, m := range schema.Methods() {
		for _, k := range []string{"Request", "Notification"} {
			name := schema.Type(m, k)
			if name == "" {
				continue
			}
			var d struct {
				Side string `json:"x-side"`
			}
			json.Unmarshal(defs[name], &d)
			stab := "unstable"
			if _, ok := stable[name]; ok {
				stab = "stable"
			}
			want[m] = stab
			if d.Side == "agent" || d.Side == "protocol" {
				must[m] = true
				if k == "Request" {
					methods[m] = name
				}
			}
		}
	}
	for _, k := range updateKinds(defs["SessionUpdate"]) {
		want[k], must[k] = "unstable", true
		if stableUpdates[k] {
			want[k] = "stable"
		}
	}
	stableCaps := map[string]bool{}
	for _, c := range capabilityPaths(stable) {
		stableCaps[c] = true
	}
	for _, c := range capabilityPaths(defs) {
		want[c], must[c] = "unstable", true
		if stableCaps[c] {
			want[c] = "stable"
		}
	}
	for name, e := range listed {
		w, known := want[name]
		switch {
		case strings.HasPrefix(name, "_"):
			w, known = "extension", true
		case !known:
			// A row may stand for a capability's sub-paths.
			for c := range want {
				if strings.HasPrefix(c, name+".") {
					w, known = want[c], true
				}
			}
		}
		if !known {
			t.Errorf("docs/acp.md lists %s, which the schema does not know", name)
			continue
		}
		if e.stability != w {
			t.Errorf("docs/acp.md says %s is %s; the schema says %s", name, e.stability, w)
		}
	}
	for name := range must {
		covered := false
		for l := range listed {
			covered = covered || l == name || strings.HasPrefix(name, l+".")
		}
		if !covered && !strings.HasPrefix(name, "proxy/") {
			t.Errorf("docs/acp.md does not list %s", name)
		}
	}
	return methods
}

// capabilityPaths are the capabilities of the schema's agent and client,
// as dotted paths: each property of AgentCapabilities and
// ClientCapabilities, into the capability objects that have some of their
// own.
func capabilityPaths(defs map[string]json.RawMessage) []string {
	type schema struct {
		Ref   string                     `json:"$ref"`
		AllOf []json.RawMessage          `json:"allOf"`
		AnyOf []json.RawMessage          `json:"anyOf"`
		Props map[string]json.RawMessage `json:"properties"`
	}
	var refOf func(raw json.RawMessage) string
	refOf = func(raw json.RawMessage) string {
		var s schema
		json.Unmarshal(raw, &s)
		if s.Ref != "" {
			return strings.TrimPrefix(s.Ref, "#/$defs/")
		}
		for _, x := range append(s.AllOf, s.AnyOf...) {
			if r := refOf(x); r != "" {
				return r
			}
		}
		return ""
	}
	var out []string
	var walk func(name, prefix string)
	walk = func(name, prefix string) {
		var s schema
		json.Unmarshal(defs[name], &s)
		for p, raw := range s.Props {
			if p == "_meta" {
				continue
			}
			path := prefix + "." + p
			var sub schema
			ref := refOf(raw)
			json.Unmarshal(defs[ref], &sub)
			delete(sub.Props, "_meta")
			if strings.HasSuffix(ref, "Capabilities") && len(sub.Props) > 0 {
				walk(ref, path)
				continue
			}
			out = append(out, path)
		}
	}
	walk("AgentCapabilities", "agentCapabilities")
	walk("ClientCapabilities", "clientCapabilities")
	return out
}

// anyParams has the required fields of every agent method's params;
// each method ignores the others.
const anyParams = `{"sessionId":"sess_none","cwd":"/nonexistent","mcpServers":[],"id":"p","providerId":"p","apiType":"openai",` +
	`"baseUrl":"http://127.0.0.1:1","headers":{},"title":"t","prompt":[{"type":"text","text":"hi"}],"modeId":"ask","configId":"mode",` +
	`"value":"ask","protocolVersion":1,"methodId":"none"}`

// updateKinds are the sessionUpdate values a SessionUpdate schema allows.
func updateKinds(raw json.RawMessage) []string {
	var u struct {
		OneOf []struct {
			Properties struct {
				Kind struct {
					Const string `json:"const"`
				} `json:"sessionUpdate"`
			} `json:"properties"`
		} `json:"oneOf"`
	}
	json.Unmarshal(raw, &u)
	var out []string
	for _, o := range u.OneOf {
		if o.Properties.Kind.Const != "" {
			out = append(out, o.Properties.Kind.Const)
		}
	}
	return out
}
