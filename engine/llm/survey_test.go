package llm_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/mm-agent/mm/engine/llm"
)

// TestSurvey: every endpoint is asked at once; only an OpenAI model list
// counts as answering; a server that hangs does not hang the survey.
func TestSurvey(t *testing.T) {
	serve := func(h http.HandlerFunc) string {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return s.URL + "/v1"
	}
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	eps := []llm.Endpoint{
		{Provider: "ollama", BaseURL: serve(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/models" {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte(`{"object":"list","data":[{"id":"qwen3:4b","object":"model"},{"id":"gemma3"}]}`))
		})},
		{Provider: "web", BaseURL: serve(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"status":"ok"}`)) })},
		{Provider: "missing", BaseURL: serve(http.NotFound)},
		{Provider: "slow", BaseURL: serve(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		})},
		{Provider: "closed", BaseURL: "http://127.0.0.1:1/v1"},
	}
	// The "slow" server answers only once the test ends: the survey
	// returns only because it is bounded.
	got := llm.Survey(context.Background(), nil, eps)
	for i, r := range got {
		want := i == 0
		if r.Provider != eps[i].Provider || r.Answers != want {
			t.Errorf("%s: answers %v, want %v", eps[i].Provider, r.Answers, want)
		}
	}
	if !slices.Equal(got[0].Models, []string{"qwen3:4b", "gemma3"}) {
		t.Errorf("models %q", got[0].Models)
	}
}

// TestKnownEndpoints: the five usual local servers, on their usual ports.
func TestKnownEndpoints(t *testing.T) {
	want := map[string]string{
		llm.ProviderLlamaCpp: "http://127.0.0.1:8080/v1", llm.ProviderOllama: "http://127.0.0.1:11434/v1",
		llm.ProviderDMR: "http://127.0.0.1:12434/engines/v1", llm.ProviderLMStudio: "http://127.0.0.1:1234/v1",
		llm.ProviderVLLM: "http://127.0.0.1:8000/v1",
	}
	got := map[string]string{}
	for _, ep := range llm.KnownEndpoints() {
		got[ep.Provider] = ep.BaseURL
	}
	if len(got) != len(want) {
		t.Fatalf("known endpoints %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s at %q, want %q", k, got[k], v)
		}
	}
}

// TestConnectorRetarget: a connector pointed at another server connects
// there at its next use — without the configured key — and back.
func TestConnectorRetarget(t *testing.T) {
	// The connector asks its probes at once: the handlers record the
	// Authorization header under a lock.
	var mu sync.Mutex
	serve := func(model string, auth *string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			*auth = r.Header.Get("Authorization")
			mu.Unlock()
			w.Write([]byte(`{"object":"list","data":[{"id":"` + model + `"}]}`))
		}))
		t.Cleanup(s.Close)
		return s.URL + "/v1"
	}
	var authA, authB string
	a, b := serve("model-a", &authA), serve("model-b", &authB)
	c := llm.NewConnector(llm.ConnectorOptions{Provider: llm.ProviderLlamaCpp, BaseURL: a, APIKey: "secret"})
	t.Cleanup(c.Close)
	ctx := context.Background()
	for _, step := range []struct {
		target, want string
		auth         *string
		key          string
	}{
		{"", "model-a", &authA, "Bearer secret"},
		{b, "model-b", &authB, ""},
		{a + "/", "model-a", &authA, "Bearer secret"},
	} {
		c.Retarget(step.target)
		ms, err := c.Models(ctx)
		if err != nil || !slices.Equal(ms, []string{step.want}) {
			t.Fatalf("retarget %q: models %q %v, want %s", step.target, ms, err, step.want)
		}
		if _, m, _ := c.Client(ctx); m != step.want {
			t.Errorf("retarget %q: chosen model %q", step.target, m)
		}
		mu.Lock()
		got := *step.auth
		mu.Unlock()
		if got != step.key {
			t.Errorf("retarget %q: Authorization %q, want %q", step.target, got, step.key)
		}
	}
}
