package app

import (
	"context"
	"strings"
	"testing"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestReady: a new session needs setting up only when no server is
// configured, none was chosen in the editor and none answers on the
// usual ports (here a fake one in their place). A configured server
// never asks for the set-up, even down: its turns say what is wrong.
func TestReady(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{})
	t.Cleanup(srv.Close)
	down := testenv.RefusedURL(t) + "/v1"
	at := func(base string) []llm.Endpoint {
		return []llm.Endpoint{{Provider: llm.ProviderLlamaCpp, BaseURL: base, Probe: strings.TrimSuffix(base, "/v1") + "/props"}}
	}
	read := func(base string) func() (*config.Config, *config.Trust, error) {
		return func() (*config.Config, *config.Trust, error) { return &config.Config{BaseURL: base}, nil, nil }
	}
	chosen := store.Open(t.TempDir(), nil)
	chosen.UpdateProviders("/ws", func(p *store.Providers) {
		p.Set = map[string]store.Endpoint{"mine": {APIType: "openai", BaseURL: down}}
		p.Active = "mine"
	})
	for _, c := range []struct {
		name  string
		c     *ACPAgent
		ready bool
	}{
		{"nothing anywhere", &ACPAgent{Read: read(""), Endpoints: at(down)}, false},
		{"a server on a usual port", &ACPAgent{Read: read(""), Endpoints: at(srv.URL())}, true},
		{"configured, down", &ACPAgent{Read: read(down), Endpoints: at(down)}, true},
		{"chosen in the editor", &ACPAgent{Read: read(""), Endpoints: at(down), Store: chosen, Cwd: "/ws"}, true},
	} {
		err := c.c.ready(context.Background())
		if (err == nil) != c.ready {
			t.Errorf("%s: ready = %v", c.name, err)
		}
		if err != nil && !strings.Contains(err.Error(), "mm setup") {
			t.Errorf("%s: the line does not say to run mm setup: %v", c.name, err)
		}
	}
}
