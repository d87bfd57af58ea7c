package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm-agent/mm/acp/acptest"
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

// providers is the answer to providers/list, sent with id.
func providers(t *testing.T, r *acptest.Wire, id string) providerList {
	t.Helper()
	m := r.Call(id, "providers/list", map[string]any{})
	var l providerList
	if m.Result == nil || json.Unmarshal(m.Result, &l) != nil {
		t.Fatalf("providers/list: %s", m.Line)
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
	w := newWorldOn(t, configured, "XDG_STATE_HOME="+t.TempDir())
	r := w.wire()
	if init := r.Initialize(`{}`); !strings.Contains(string(init.Result), `"providers":{}`) {
		t.Errorf("providers not advertised: %s", init.Line)
	}
	l := providers(t, r, "l1")
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
		if m := r.Call(id, "providers/set", json.RawMessage(params)); m.Error == nil || !strings.Contains(m.Error.Message, line) {
			t.Errorf("providers/set %s: %s, want a refusal saying %q", params, m.Line, line)
		}
	}
	if m := r.Call("dm", "providers/disable", map[string]any{"providerId": "main"}); m.Error == nil || !strings.Contains(m.Error.Message, "cannot be disabled") {
		t.Errorf("disabling main: %s", m.Line)
	}

	// A session open before the choice: its first turn goes to the
	// configured server, its next one to the server set.
	newSession := func(id string) string {
		var ns struct {
			SessionID string `json:"sessionId"`
		}
		if m := r.Call(id, "session/new", map[string]any{"cwd": w.dir, "mcpServers": []any{}}); json.Unmarshal(m.Result, &ns) != nil || ns.SessionID == "" {
			t.Fatalf("session/new: %s", m.Line)
		}
		return ns.SessionID
	}
	open := newSession("new1")
	r.Prompt("p1", open, "Fix the parser")
	if len(configured.Requests()) != 1 || len(chosen.Requests()) != 0 {
		t.Fatalf("before the choice: %d requests to the configured server, %d to the other", len(configured.Requests()), len(chosen.Requests()))
	}

	if m := r.Call("set", "providers/set", map[string]any{"providerId": "mine", "apiType": "openai", "baseUrl": chosen.URL()}); m.Result == nil {
		t.Fatalf("providers/set: %s", m.Line)
	}
	l = providers(t, r, "l2")
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
	r.Prompt("p2", open, "and the lexer?")
	r.Prompt("p3", newSession("new2"), "Fix the parser")
	if len(configured.Requests()) != 1 || len(chosen.Requests()) != 2 {
		t.Errorf("after the choice: %d requests to the configured server (want 1), %d to the one set (want 2: the open session's and a new one's)",
			len(configured.Requests()), len(chosen.Requests()))
	}
	if reqs := chosen.Requests(); len(reqs) > 0 {
		if joined := transcript(reqs[0]); !strings.Contains(joined, "Looking at the parser.") {
			t.Errorf("the open session's conversation did not follow it to the new server:\n%s", joined)
		}
	}
	r.CheckSchema()
	if err := r.Close(); err != nil {
		t.Error(err)
	}

	// Remembered for the workspace: a restarted agent uses it; another
	// workspace does not.
	r2 := w.wire()
	r2.Initialize(`{}`)
	if l := providers(t, r2, "l3"); !strings.Contains(listActive(l), "mine") {
		t.Errorf("after a restart, in use: %s", listActive(l))
	}
	if m := r2.Call("off", "providers/disable", map[string]any{"providerId": "mine"}); m.Result == nil {
		t.Fatalf("providers/disable: %s", m.Line)
	}
	l = providers(t, r2, "l4")
	if got := listActive(l); got != "main" {
		t.Errorf("after disable, in use %q", got)
	}
	for _, p := range l.Providers {
		if p.ProviderID == "mine" {
			t.Errorf("a disabled server is still listed: %+v", p)
		}
	}
	r2.CheckSchema()
	r2.Close()
	other := serveWire(t, t.TempDir(), w.env)
	other.Initialize(`{}`)
	if got := listActive(providers(t, other, "l5")); got != "main" {
		t.Errorf("another workspace uses %q", got)
	}
	other.Close()
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
	w := newWorld(t, "", "XDG_STATE_HOME="+t.TempDir())
	w.write(".mm/agent.yaml", "baseURL: http://203.0.113.7:8080/v1\n")
	r := w.wire()
	r.Initialize(`{}`)
	l := providers(t, r, "l")
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
	if m := r.Call("set", "providers/set", map[string]any{"providerId": "workspace", "apiType": "openai", "baseUrl": "http://203.0.113.7:8080/v1"}); m.Error == nil || !strings.Contains(m.Error.Message, "mm trust") {
		t.Errorf("providers/set of the untrusted server: %s", m.Line)
	}
	r.CheckSchema()
	r.Close()
}

// modelPicker is the model option of the last config_option_update mm
// wrote for session sid: its values and the current one (nil values: no
// update, or one without a model option).
func modelPicker(msgs []acptest.Msg, sid string) (values []string, current string) {
	for _, m := range msgs {
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
	beta := llmtest.NewServer(llmtest.Scenario{Models: []string{"beta-1"}, Steps: []llmtest.Step{{Content: "from beta"}}})
	t.Cleanup(beta.Close)
	w := newWorldOn(t, alpha, "MM_MODEL=alpha-1", "XDG_STATE_HOME="+t.TempDir())
	r := w.wire()
	sid := r.Handshake(w.dir)
	r.Until("the model picker", func(msgs []acptest.Msg) bool {
		vs, _ := modelPicker(msgs, sid)
		return len(vs) > 0
	})
	if vs, cur := modelPicker(r.Msgs(), sid); strings.Join(vs, ",") != "alpha-1,alpha-2" || cur != "alpha-1" {
		t.Fatalf("the first server's picker: %v, current %q", vs, cur)
	}
	if m := r.Call("m", "session/set_config_option", map[string]any{"sessionId": sid, "configId": "model", "value": "alpha-2"}); m.Result == nil {
		t.Fatalf("choosing alpha-2: %s", m.Line)
	}
	if m := r.Call("set", "providers/set", map[string]any{"providerId": "beta", "apiType": "openai", "baseUrl": beta.URL()}); m.Result == nil {
		t.Fatalf("providers/set: %s", m.Line)
	}
	r.Until("the picker of the server set", func(msgs []acptest.Msg) bool {
		vs, cur := modelPicker(msgs, sid)
		return strings.Join(vs, ",") == "beta-1" && cur == "beta-1"
	})
	r.Prompt("p", sid, "hello")
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
	r.CheckSchema()
}
