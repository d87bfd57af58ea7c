package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// providerList is a providers/list answer in the schema's shape.
type providerList struct {
	Providers []struct {
		ProviderID string `json:"providerId"`
		Required   bool   `json:"required"`
		Current    *struct {
			APIType string `json:"apiType"`
			BaseURL string `json:"baseUrl"`
		} `json:"current"`
		Meta struct {
			MM struct {
				Active  bool     `json:"active"`
				Answers bool     `json:"answers"`
				Source  string   `json:"source"`
				Models  []string `json:"models"`
				BaseURL string   `json:"baseUrl"`
			} `json:"mm"`
		} `json:"_meta"`
	} `json:"providers"`
}

func (r *rawAgent) providers(id string) providerList {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"providers/list","params":{}}`)
	m := r.wait(`"` + id + `"`)
	var l providerList
	if m.Result == nil || json.Unmarshal(m.Result, &l) != nil {
		r.t.Fatalf("providers/list: %s", m.Line)
	}
	return l
}

// TestACPProviders: providers/* (unstable, advertised) let the editor
// point mm at another model server without editing a file: list shows
// the configured one, set picks another — and the next turn of an open
// session, and a new session's, reach it, not the configured one — the
// choice is remembered for the
// workspace across a restart, disable forgets it. What mm cannot honour
// (another protocol, headers, disabling main) is refused with a line.
// Every message validates against the 2026-11 schema.
func TestACPProviders(t *testing.T) {
	t.Parallel()
	configured, chosen := scenario(t, "titles"), scenario(t, "titles")
	dir := t.TempDir()
	env := mmEnv(t, configured, "XDG_STATE_HOME="+t.TempDir())
	r := startRaw(t, dir, env)
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	init := r.wait(`"init"`)
	if !strings.Contains(string(init.Result), `"providers":{}`) {
		t.Errorf("providers not advertised: %s", init.Line)
	}
	l := r.providers("l1")
	if len(l.Providers) == 0 || l.Providers[0].ProviderID != "main" || !l.Providers[0].Required ||
		l.Providers[0].Current == nil || l.Providers[0].Current.BaseURL != configured.URL() ||
		!l.Providers[0].Meta.MM.Active || !l.Providers[0].Meta.MM.Answers || l.Providers[0].Meta.MM.Source != "config" {
		t.Fatalf("the configured server is not listed as main, in use and answering: %+v", l)
	}

	refused := map[string]string{
		`{"providerId":"x","apiType":"anthropic","baseUrl":"http://127.0.0.1:1/v1"}`:                  "OpenAI-compatible",
		`{"providerId":"x","apiType":"openai","baseUrl":"127.0.0.1:1"}`:                               "not an http(s) URL",
		`{"providerId":"x","apiType":"openai","baseUrl":"http://127.0.0.1:1/v1","headers":{"a":"b"}}`: "no custom headers",
	}
	n := 0
	for params, line := range refused {
		n++
		id := "bad" + string(rune('0'+n))
		r.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"providers/set","params":` + params + `}`)
		if m := r.wait(`"` + id + `"`); m.Error == nil || !strings.Contains(m.Error.Message, line) {
			t.Errorf("providers/set %s: %s, want a refusal saying %q", params, m.Line, line)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":"dm","method":"providers/disable","params":{"providerId":"main"}}`)
	if m := r.wait(`"dm"`); m.Error == nil || !strings.Contains(m.Error.Message, "cannot be disabled") {
		t.Errorf("disabling main: %s", m.Line)
	}

	// A session open before the choice: its first turn goes to the
	// configured server, its next one to the server set.
	cwd, _ := json.Marshal(dir)
	newSession := func(id string) string {
		r.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"session/new","params":{"cwd":` + string(cwd) + `,"mcpServers":[]}}`)
		var ns struct {
			SessionID string `json:"sessionId"`
		}
		if m := r.wait(`"` + id + `"`); json.Unmarshal(m.Result, &ns) != nil || ns.SessionID == "" {
			t.Fatalf("session/new: %s", m.Line)
		}
		return ns.SessionID
	}
	prompt := func(id, sid, text string) {
		r.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"` + text + `"}]}}`)
		if m := r.wait(`"` + id + `"`); m.Result == nil {
			t.Fatalf("prompt: %s", m.Line)
		}
	}
	open := newSession("new1")
	prompt("p1", open, "Fix the parser")
	if len(configured.Requests()) != 1 || len(chosen.Requests()) != 0 {
		t.Fatalf("before the choice: %d requests to the configured server, %d to the other", len(configured.Requests()), len(chosen.Requests()))
	}

	b, _ := json.Marshal(chosen.URL())
	r.send(`{"jsonrpc":"2.0","id":"set","method":"providers/set","params":{"providerId":"mine","apiType":"openai","baseUrl":` + string(b) + `}}`)
	if m := r.wait(`"set"`); m.Result == nil {
		t.Fatalf("providers/set: %s", m.Line)
	}
	l = r.providers("l2")
	mine := false
	for _, p := range l.Providers {
		if p.ProviderID == "mine" {
			mine = p.Meta.MM.Active && p.Current != nil && p.Current.BaseURL == chosen.URL() && p.Meta.MM.Answers && p.Meta.MM.Source == "editor"
		} else if p.Meta.MM.Active {
			t.Errorf("%s still in use", p.ProviderID)
		}
	}
	if !mine {
		t.Errorf("the server set is not listed in use: %+v", l)
	}
	prompt("p2", open, "and the lexer?")
	prompt("p3", newSession("new2"), "Fix the parser")
	if len(configured.Requests()) != 1 || len(chosen.Requests()) != 2 {
		t.Errorf("after the choice: %d requests to the configured server (want 1), %d to the one set (want 2: the open session's and a new one's)",
			len(configured.Requests()), len(chosen.Requests()))
	}
	if reqs := chosen.Requests(); len(reqs) > 0 {
		var said []string
		for _, m := range reqs[0].Messages {
			said = append(said, m.Content)
		}
		if joined := strings.Join(said, "\n"); !strings.Contains(joined, "Looking at the parser.") {
			t.Errorf("the open session's conversation did not follow it to the new server:\n%s", joined)
		}
	}
	checkSchema(t, r.sent.String(), r.lines())
	if err := r.close(); err != nil {
		t.Error(err)
	}

	// Remembered for the workspace: a restarted agent uses it; another
	// workspace does not.
	r2 := startRaw(t, dir, env)
	r2.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	r2.wait(`"init"`)
	if l := r2.providers("l3"); !strings.Contains(listActive(l), "mine") {
		t.Errorf("after a restart, in use: %s", listActive(l))
	}
	r2.send(`{"jsonrpc":"2.0","id":"off","method":"providers/disable","params":{"providerId":"mine"}}`)
	if m := r2.wait(`"off"`); m.Result == nil {
		t.Fatalf("providers/disable: %s", m.Line)
	}
	l = r2.providers("l4")
	if got := listActive(l); got != "main" {
		t.Errorf("after disable, in use %q", got)
	}
	for _, p := range l.Providers {
		if p.ProviderID == "mine" {
			t.Errorf("a disabled server is still listed: %+v", p)
		}
	}
	checkSchema(t, r2.sent.String(), r2.lines())
	r2.close()
	other := startRaw(t, t.TempDir(), env)
	other.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	other.wait(`"init"`)
	if got := listActive(other.providers("l5")); got != "main" {
		t.Errorf("another workspace uses %q", got)
	}
	other.close()
}

func listActive(l providerList) string {
	var on []string
	for _, p := range l.Providers {
		if p.Meta.MM.Active {
			on = append(on, p.ProviderID)
		}
	}
	return strings.Join(on, ",")
}

// TestACPProvidersUntrusted: the server an untrusted workspace config
// names is listed — so the user knows of it — but disabled and not
// selectable by its id: workspace trust decides, not a click.
func TestACPProvidersUntrusted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".mm"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "baseURL: http://203.0.113.7:8080/v1\n")
	r := startRaw(t, dir, mmEnv(t, nil, "XDG_STATE_HOME="+t.TempDir()))
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	r.wait(`"init"`)
	l := r.providers("l")
	var found bool
	for _, p := range l.Providers {
		if p.Current != nil && strings.Contains(p.Current.BaseURL, "203.0.113.7") {
			t.Errorf("the untrusted config's server is offered as %s", p.ProviderID)
		}
		if p.ProviderID == "workspace" {
			found = p.Current == nil && p.Meta.MM.BaseURL == "http://203.0.113.7:8080/v1" && !p.Meta.MM.Active
		}
	}
	if !found {
		t.Errorf("the untrusted config's server is not listed, disabled: %+v", l)
	}
	r.send(`{"jsonrpc":"2.0","id":"set","method":"providers/set","params":{"providerId":"workspace","apiType":"openai","baseUrl":"http://203.0.113.7:8080/v1"}}`)
	if m := r.wait(`"set"`); m.Error == nil || !strings.Contains(m.Error.Message, "mm trust") {
		t.Errorf("providers/set of the untrusted server: %s", m.Line)
	}
	checkSchema(t, r.sent.String(), r.lines())
	r.close()
}

// modelPicker is the model option of the last config_option_update mm
// wrote for session sid: its values and the current one (nil values: no
// update, or one without a model option).
func modelPicker(t *testing.T, stream, sid string) (values []string, current string) {
	for _, m := range wireLines(t, stream) {
		if m.Method != "session/update" {
			continue
		}
		var p struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Kind    string `json:"sessionUpdate"`
				Options []struct {
					ID      string `json:"id"`
					Current string `json:"currentValue"`
					Options []struct {
						Value string `json:"value"`
					} `json:"options"`
				} `json:"configOptions"`
			} `json:"update"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.SessionID != sid || p.Update.Kind != "config_option_update" {
			continue
		}
		values, current = nil, ""
		for _, o := range p.Update.Options {
			if o.ID == "model" {
				values, current = []string{}, o.Current
				for _, v := range o.Options {
					values = append(values, v.Value)
				}
			}
		}
	}
	return values, current
}

// TestACPProvidersFollowModels: after providers/set, an open session's
// model picker lists the new server's models, and a model chosen from
// the former server's list — which the new server does not serve, and a
// real Ollama, vLLM or LM Studio would refuse — is not sent to it: the
// session goes back to the new server's default, and the picker says so.
func TestACPProvidersFollowModels(t *testing.T) {
	t.Parallel()
	alpha := llmtest.NewServer(llmtest.Scenario{Models: []string{"alpha-1", "alpha-2"}, Steps: []llmtest.Step{{Content: "from alpha"}}})
	t.Cleanup(alpha.Close)
	beta := llmtest.NewServer(llmtest.Scenario{Models: []string{"beta-1"}, Steps: []llmtest.Step{{Content: "from beta"}}})
	t.Cleanup(beta.Close)
	dir := t.TempDir()
	r := startRaw(t, dir, mmEnv(t, alpha, "MM_MODEL=alpha-1", "XDG_STATE_HOME="+t.TempDir()))
	sid := rawOpen(r, dir, `{}`, "")
	r.until("the model picker", func([]rawMsg) bool {
		vs, _ := modelPicker(t, r.lines(), sid)
		return len(vs) > 0
	})
	if vs, cur := modelPicker(t, r.lines(), sid); strings.Join(vs, ",") != "alpha-1,alpha-2" || cur != "alpha-1" {
		t.Fatalf("the first server's picker: %v, current %q", vs, cur)
	}
	r.send(`{"jsonrpc":"2.0","id":"m","method":"session/set_config_option","params":{"sessionId":"` + sid + `","configId":"model","value":"alpha-2"}}`)
	if m := r.wait(`"m"`); m.Result == nil {
		t.Fatalf("choosing alpha-2: %s", m.Line)
	}

	b, _ := json.Marshal(beta.URL())
	r.send(`{"jsonrpc":"2.0","id":"set","method":"providers/set","params":{"providerId":"beta","apiType":"openai","baseUrl":` + string(b) + `}}`)
	if m := r.wait(`"set"`); m.Result == nil {
		t.Fatalf("providers/set: %s", m.Line)
	}
	r.until("the picker of the server set", func([]rawMsg) bool {
		vs, cur := modelPicker(t, r.lines(), sid)
		return strings.Join(vs, ",") == "beta-1" && cur == "beta-1"
	})
	rawPrompt(r, sid, "p", "hello")
	if reqs := beta.Requests(); len(reqs) != 1 || reqs[0].Model != "beta-1" {
		var names []string
		for _, q := range reqs {
			names = append(names, q.Model)
		}
		t.Errorf("the server set got requests for models %q, want one for beta-1 (the one it serves)", names)
	}
	if n := len(alpha.Requests()); n != 0 {
		t.Errorf("the former server got %d requests", n)
	}
	checkSchema(t, r.sent.String(), r.lines())
}
