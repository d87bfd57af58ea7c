package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestREADMEACPSurface keeps the README's ACP table true: each row's
// stability is the schema's (stable when the stable schema has it), each
// update is one the schema knows, each method listed is answered by mm
// acp (not -32601), and every agent method of the schema that is not
// listed answers -32601 — the table is exactly what mm serves.
func TestREADMEACPSurface(t *testing.T) {
	t.Parallel()
	defs := schemaDefs(t)
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	stable := stableSchema(t)
	row := regexp.MustCompile("(?m)^\\| `([a-z_/]+)` \\| (stable|unstable) \\| (.+) \\|$")
	listed := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		listed[m[1]] = m[2]
	}
	if len(listed) < 10 {
		t.Fatalf("the README's ACP table has %d rows", len(listed))
	}
	updates := map[string]bool{}
	for _, raw := range []json.RawMessage{defs["SessionUpdate"]} {
		for _, k := range updateKinds(raw) {
			updates[k] = true
		}
	}
	stableUpdates := map[string]bool{}
	for _, k := range updateKinds(stable["SessionUpdate"]) {
		stableUpdates[k] = true
	}
	methods := map[string]string{} // agent method → its Request type
	for m, kinds := range acpSchema.kinds {
		var d struct {
			Side string `json:"x-side"`
		}
		if r := kinds["Request"]; r != "" {
			json.Unmarshal(defs[r], &d)
			if d.Side == "agent" {
				methods[m] = r
			}
		}
		if n := kinds["Notification"]; n != "" && m == "session/cancel" {
			methods[m] = n
		}
	}
	for name, stab := range listed {
		want := "unstable"
		switch {
		case methods[name] != "":
			if _, ok := stable[methods[name]]; ok {
				want = "stable"
			}
		case updates[name]:
			if stableUpdates[name] {
				want = "stable"
			}
		default:
			t.Errorf("README lists %s, which the schema does not know", name)
			continue
		}
		if stab != want {
			t.Errorf("README says %s is %s; the schema says %s", name, stab, want)
		}
	}

	dir := t.TempDir()
	r := startRaw(t, dir, mmEnv(t, nil))
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	r.wait(`"init"`)
	for m := range methods {
		if m == "session/cancel" || m == "initialize" {
			continue // a notification; answered above
		}
		// Params that pass the SDK's checks, so that what answers is mm
		// (the SDK checks a method's params before it looks for it).
		r.send(`{"jsonrpc":"2.0","id":"` + m + `","method":"` + m + `","params":` + anyParams + `}`)
		a := r.wait(`"` + m + `"`)
		missing := a.Error != nil && a.Error.Code == -32601
		if _, ok := listed[m]; ok == missing {
			t.Errorf("%s: listed in the README %v, answered %s", m, ok, a.Line)
		}
	}
	if err := r.close(); err != nil {
		t.Error(err)
	}
}

// anyParams has the required fields of every agent method's params;
// each method ignores the others.
const anyParams = `{"sessionId":"sess_none","cwd":"/nonexistent","mcpServers":[],"id":"p","providerId":"p","apiType":"openai",` +
	`"baseUrl":"http://127.0.0.1:1","headers":{},"title":"t","prompt":[{"type":"text","text":"hi"}],"modeId":"ask","configId":"mode",` +
	`"value":"ask","protocolVersion":1,"methodId":"none"}`

// stableSchema is the stable schema's definitions (schema.json beside the
// unstable one).
func stableSchema(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	wd, _ := os.Getwd()
	for dir := wd; filepath.Dir(dir) != dir; dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "shared", "acp-schema", "schema.json"))
		if err != nil {
			continue
		}
		var root struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(b, &root); err != nil {
			t.Fatal(err)
		}
		return root.Defs
	}
	t.Skip("no shared/acp-schema/schema.json above the module")
	return nil
}

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
