package acp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// wireAnswer is one answer as the client reads it.
type wireAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// serveAnswers serves a on the lines until EOF and returns every answer,
// errors included, by id.
func serveAnswers(t *testing.T, a *Agent, lines ...string) map[string]wireAnswer {
	t.Helper()
	var out lockedBuffer
	if err := Serve(context.Background(), a, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	got := map[string]wireAnswer{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID json.RawMessage `json:"id"`
			wireAnswer
		}
		if json.Unmarshal([]byte(l), &m) == nil && len(m.ID) > 0 {
			got[string(m.ID)] = m.wireAnswer
		}
	}
	return got
}

func initLine(caps string) string {
	return `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":` + caps + `}}`
}

// TestAuthMethods: the terminal set-up is listed only to a client that
// said it can run it — the schema's auth.terminal, or the _meta flag of
// the clients before it, which also get the command form — and the agent
// method, a new look for a server, to every client.
func TestAuthMethods(t *testing.T) {
	t.Parallel()
	ready := func(context.Context) error { return nil }
	for _, c := range []struct {
		name, caps string
		setup      *Setup
		want       string
	}{
		{"no set-up", `{"auth":{"terminal":true}}`, nil, `[]`},
		{"no terminal", `{}`, &Setup{Args: []string{"setup"}, Ready: ready},
			`[{"description":"Start llama-server, Ollama, LM Studio, vLLM or Docker Model Runner on this machine, then choose this: mm looks for it again","id":"mm-local-server","name":"Use a model server started since"}]`},
		{"auth.terminal", `{"auth":{"terminal":true}}`, &Setup{Args: []string{"setup"}, Command: "/opt/mm/mm", Ready: ready},
			`[{"args":["setup"],"description":"Runs mm setup in a terminal: it finds the model servers on this machine, lets you pick a model and saves it in your mm config","id":"mm-setup","name":"Set up a local model","type":"terminal"},` +
				`{"description":"Start llama-server, Ollama, LM Studio, vLLM or Docker Model Runner on this machine, then choose this: mm looks for it again","id":"mm-local-server","name":"Use a model server started since"}]`},
		{"_meta terminal-auth", `{"_meta":{"terminal-auth":true}}`, &Setup{Args: []string{"setup"}, Command: "/opt/mm/mm", Ready: ready},
			`[{"_meta":{"terminal-auth":{"args":["setup"],"command":"/opt/mm/mm","label":"mm setup"}},"args":["setup"],"description":"Runs mm setup in a terminal: it finds the model servers on this machine, lets you pick a model and saves it in your mm config","id":"mm-setup","name":"Set up a local model","type":"terminal"},` +
				`{"description":"Start llama-server, Ollama, LM Studio, vLLM or Docker Model Runner on this machine, then choose this: mm looks for it again","id":"mm-local-server","name":"Use a model server started since"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := serveAnswers(t, New(Options{Setup: c.setup}), initLine(c.caps))[`"init"`]
			var res struct {
				AuthMethods json.RawMessage `json:"authMethods"`
			}
			if got.Error != nil || json.Unmarshal(got.Result, &res) != nil {
				t.Fatalf("initialize: %+v", got)
			}
			if string(res.AuthMethods) != c.want {
				t.Errorf("authMethods\n got %s\nwant %s", res.AuthMethods, c.want)
			}
		})
	}
}

// TestAuthRequired: with no server to use, session/new answers ACP's
// auth_required (-32000) with the one line, and so does authenticate;
// once the set-up is done (Ready reads it again) authenticate succeeds
// with either method. An id mm never offered is invalid params.
func TestAuthRequired(t *testing.T) {
	t.Parallel()
	var setUp atomic.Bool
	const line = "mm needs a model server: run `mm setup`"
	a := New(Options{
		Builder: func() (*Builder, error) { return &Builder{}, nil },
		Setup: &Setup{Args: []string{"setup"}, Ready: func(context.Context) error {
			if setUp.Load() {
				return nil
			}
			return errors.New(line)
		}},
	})
	got := serveAnswers(t, a, initLine(`{"auth":{"terminal":true}}`),
		`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`,
		`{"jsonrpc":"2.0","id":"look","method":"authenticate","params":{"methodId":"mm-local-server"}}`,
		`{"jsonrpc":"2.0","id":"odd","method":"authenticate","params":{"methodId":"oauth"}}`)
	for _, id := range []string{`"new"`, `"look"`} {
		if e := got[id].Error; e == nil || e.Code != -32000 || e.Message != line {
			t.Errorf("%s: %+v, want auth_required with the line", id, got[id])
		}
	}
	if e := got[`"odd"`].Error; e == nil || e.Code != -32602 || !strings.Contains(e.Message, "mm-setup") {
		t.Errorf("an unknown method: %+v", got[`"odd"`])
	}

	setUp.Store(true) // mm setup ran in the editor's terminal
	got = serveAnswers(t, New(a.opts), initLine(`{"auth":{"terminal":true}}`),
		`{"jsonrpc":"2.0","id":"setup","method":"authenticate","params":{"methodId":"mm-setup"}}`,
		`{"jsonrpc":"2.0","id":"look","method":"authenticate","params":{"methodId":"mm-local-server"}}`)
	for _, id := range []string{`"setup"`, `"look"`} {
		if got[id].Error != nil || string(got[id].Result) != "{}" {
			t.Errorf("authenticate %s after the set-up: %+v", id, got[id])
		}
	}
}
