package acp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/internal/testenv"
)

// serveLines serves a on the given input lines until EOF and returns the
// answer to each request, by id.
func serveLines(t *testing.T, a *Agent, lines ...string) map[string]json.RawMessage {
	t.Helper()
	var out lockedBuffer
	// Serve returns at EOF, once every request read was answered.
	if err := Serve(context.Background(), a, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	answers := map[string]json.RawMessage{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(l), &m) != nil || len(m.ID) == 0 {
			continue
		}
		if len(m.Error) > 0 {
			t.Fatalf("answer %s: error %s", m.ID, m.Error)
		}
		answers[string(m.ID)] = m.Result
	}
	return answers
}

type listed struct {
	ID      string `json:"providerId"`
	Current *struct {
		BaseURL string `json:"baseUrl"`
	} `json:"current"`
	Meta struct {
		MM struct {
			Kind    string   `json:"kind"`
			BaseURL string   `json:"baseUrl"`
			Source  string   `json:"source"`
			Answers bool     `json:"answers"`
			Active  bool     `json:"active"`
			Models  []string `json:"models"`
		} `json:"mm"`
	} `json:"_meta"`
}

// TestProvidersLocal: providers/list surveys the usual local servers
// (here fake ones in their place, through Providers.Local) and lists
// each that answers once, with its kind, models and base URL: the
// configured server, itself one of them (written another way), is listed
// as main only; a server that does not answer is left out; a local
// server the user disabled keeps its kind and base URL, not in use.
func TestProvidersLocal(t *testing.T) {
	vllm := llmtest.NewServer(llmtest.Scenario{Models: []string{"qwen3-8b"}})
	t.Cleanup(vllm.Close)
	ollama := llmtest.NewServer(llmtest.Scenario{Models: []string{"llama3.2", "qwen3:4b"}})
	t.Cleanup(ollama.Close)
	down := testenv.RefusedURL(t) + "/v1"
	local := []llm.Endpoint{
		{Provider: llm.ProviderVLLM, BaseURL: vllm.URL()},
		{Provider: llm.ProviderOllama, BaseURL: ollama.URL()},
		{Provider: llm.ProviderLMStudio, BaseURL: down},
	}
	// The user's config names the vLLM server as localhost, with a slash.
	configured := strings.Replace(vllm.URL(), "127.0.0.1", "localhost", 1) + "/"
	st := store.Open(t.TempDir(), nil)
	ws := t.TempDir()
	agent := func() *Agent {
		return New(Options{Store: st, Providers: &Providers{Workspace: ws, Local: local,
			Configured: func() (Configured, error) { return Configured{BaseURL: configured}, nil }}})
	}
	const init = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`
	list := func() map[string]listed {
		t.Helper()
		a := serveLines(t, agent(), init, `{"jsonrpc":"2.0","id":"l","method":"providers/list","params":{}}`)
		var res struct{ Providers []listed }
		if err := json.Unmarshal(a[`"l"`], &res); err != nil {
			t.Fatalf("providers/list: %v: %s", err, a[`"l"`])
		}
		by := map[string]listed{}
		var ids []string
		for _, p := range res.Providers {
			by[p.ID] = p
			ids = append(ids, p.ID)
		}
		if strings.Join(ids, ",") != "main,ollama" {
			t.Errorf("listed %v, want main and ollama once each (vllm is main; lmstudio does not answer)", ids)
		}
		return by
	}

	by := list()
	if m := by["main"]; m.Current == nil || m.Current.BaseURL != configured || m.Meta.MM.Kind != llm.ProviderVLLM ||
		!m.Meta.MM.Answers || strings.Join(m.Meta.MM.Models, ",") != "qwen3-8b" || !m.Meta.MM.Active {
		t.Errorf("main: %+v", m)
	}
	if o := by["ollama"]; o.Current == nil || o.Current.BaseURL != ollama.URL() || o.Meta.MM.Kind != llm.ProviderOllama ||
		o.Meta.MM.Source != "local" || !o.Meta.MM.Answers || strings.Join(o.Meta.MM.Models, ",") != "llama3.2,qwen3:4b" || o.Meta.MM.Active {
		t.Errorf("ollama: %+v", o)
	}

	serveLines(t, agent(), init, `{"jsonrpc":"2.0","id":"d","method":"providers/disable","params":{"providerId":"ollama"}}`)
	by = list()
	if o := by["ollama"]; o.Current != nil || o.Meta.MM.Kind != llm.ProviderOllama || o.Meta.MM.BaseURL != ollama.URL() || o.Meta.MM.Active {
		t.Errorf("the disabled ollama lost what it is: %+v", o)
	}
}
