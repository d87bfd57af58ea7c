package llm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// A bare URL to a llama-server (the README's Zed snippet sets only
// MM_BASE_URL): the kind is detected and the window learnt from /props
// in the background, without a turn waiting for it.
func TestConnectorBareURLLearnsKindAndWindow(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{NCtx: 12288, Models: []string{"qwen3-4b"},
		Steps: []llmtest.Step{{Content: "hi"}}})
	defer srv.Close()
	c := llm.NewConnector(llm.ConnectorOptions{BaseURL: srv.URL()})
	defer c.Close()
	if n, _ := c.Window(); n != 0 {
		t.Fatalf("window known before any probe: %d", n)
	}
	<-c.Probed()
	n, source := c.Window()
	if n != 12288 || source != "llama.cpp /props" {
		t.Fatalf("window = %d from %q, want 12288 from llama.cpp /props", n, source)
	}
	if p := c.Provider(); p != llm.ProviderLlamaCpp {
		t.Fatalf("provider = %q, want llamacpp", p)
	}
	var got string
	if _, err := c.Stream(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, func(d llm.Delta) error {
		got += d.Content
		return nil
	}); err != nil || got != "hi" {
		t.Fatalf("stream: %q, %v", got, err)
	}
	if m := srv.Requests()[0].Model; m != "qwen3-4b" {
		t.Fatalf("model sent = %q, want the first served one", m)
	}
}

// A configured window wins; the overflow error's n_ctx replaces it.
func TestConnectorLearnReplacesConfiguredWindow(t *testing.T) {
	c := llm.NewConnector(llm.ConnectorOptions{BaseURL: "http://127.0.0.1:1/v1", ContextWindow: 32768})
	defer c.Close()
	if n, src := c.Window(); n != 32768 || src != "config" {
		t.Fatalf("window = %d %q", n, src)
	}
	c.Learn(8192)
	if n, _ := c.Window(); n != 8192 {
		t.Fatalf("learnt window = %d, want 8192", n)
	}
}

// A server that never answers does not freeze anyone: the connect is
// bounded, and Window answers from the cache meanwhile.
func TestConnectorStuckServerIsBounded(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	defer close(release)
	c := llm.NewConnector(llm.ConnectorOptions{BaseURL: hung.URL + "/v1", Provider: llm.ProviderLlamaCpp, ProbeTimeout: 200 * time.Millisecond})
	defer c.Close()
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Client(context.Background())
		done <- err
	}()
	windowDone := make(chan struct{})
	go func() {
		c.Window()
		close(windowDone)
	}()
	select {
	case <-windowDone:
	case <-time.After(10 * time.Second):
		t.Fatal("Window blocked behind a connect in flight")
	}
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a server that never answers /models gave a client")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("connect to a hung server was not bounded")
	}
}

func TestConnectorNoLocalServerLine(t *testing.T) {
	c := llm.NewConnector(llm.ConnectorOptions{Endpoints: []llm.Endpoint{{Provider: "llamacpp", BaseURL: "http://127.0.0.1:1/v1", Probe: "http://127.0.0.1:1/props"}}})
	defer c.Close()
	_, _, err := c.Client(context.Background())
	var nl llm.ErrNoLocalServer
	if !errors.As(err, &nl) || !errors.Is(err, llm.ErrNoServer) {
		t.Fatalf("err = %v, want ErrNoLocalServer", err)
	}
	line := llm.Explain(err)
	if line != nl.Error() {
		t.Fatalf("Explain = %q", line)
	}
	// The way out is the user's own: mm setup and their config, never a
	// key of .mm/agent.yaml, which an untrusted workspace may not set.
	if !strings.Contains(line, "mm setup") || strings.Contains(line, ".mm/agent.yaml") {
		t.Errorf("the line does not point at mm setup and the user's config: %q", line)
	}
}

func TestDetectKind(t *testing.T) {
	routes := map[string]map[string]string{
		llm.ProviderLlamaCpp: {"/props": `{"default_generation_settings":{"n_ctx":4096}}`},
		llm.ProviderOllama:   {"/api/version": `{"version":"0.12.3"}`},
		llm.ProviderLMStudio: {"/api/v1/models": `{"models":[{"key":"qwen3-4b","loaded_instances":[]}]}`},
		llm.ProviderVLLM:     {"/v1/models": `{"object":"list","data":[{"id":"q","max_model_len":32768}]}`},
		llm.ProviderOpenAI:   {"/v1/models": `{"object":"list","data":[{"id":"gpt-4o"}]}`},
	}
	for want, paths := range routes {
		t.Run(want, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, ok := paths[r.URL.Path]
				if !ok {
					http.Error(w, `{"error":"not found"}`, 404)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(body))
			}))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if got := llm.DetectKind(ctx, nil, srv.URL+"/v1", ""); got != want {
				t.Fatalf("DetectKind = %q, want %q", got, want)
			}
		})
	}
	if got := llm.DetectKind(context.Background(), nil, "http://127.0.0.1:12434/engines/llama.cpp/v1", ""); got != llm.ProviderDMR {
		t.Fatalf("DMR path: %q", got)
	}
}

// A caller cancelled while its connect is in flight does not fail the
// callers waiting on that connect: each waits under its own context, so
// one session's cancel never ends another's turn with "context
// canceled".
func TestConnectorWaiterOutlivesCancelledConnect(t *testing.T) {
	first := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		blocked := false
		once.Do(func() { blocked = true })
		if blocked { // the first /models hangs until its caller goes
			close(first)
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"object":"list","data":[{"id":"m1","object":"model"}]}`))
	}))
	defer srv.Close()
	c := llm.NewConnector(llm.ConnectorOptions{BaseURL: srv.URL + "/v1", Provider: llm.ProviderLlamaCpp, ProbeTimeout: 20 * time.Second})
	defer c.Close()
	ctxA, cancelA := context.WithCancel(context.Background())
	errA := make(chan error, 1)
	go func() { _, _, err := c.Client(ctxA); errA <- err }()
	<-first
	errB := make(chan error, 1)
	go func() { _, _, err := c.Client(context.Background()); errB <- err }()
	time.Sleep(50 * time.Millisecond) // let B wait on A's connect
	cancelA()
	if err := <-errA; !errors.Is(err, context.Canceled) {
		t.Fatalf("A: err = %v, want context.Canceled", err)
	}
	select {
	case err := <-errB:
		if err != nil {
			t.Fatalf("B got A's failure: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("B never connected")
	}
}

// A server too busy to answer the window probe in time (a loaded
// machine, a model still loading) has not said it has no window: mm
// does not warn that the window is unknown, and asks again at the next
// call instead of half a minute later — so budgeting by the real window
// starts as soon as the server answers.
func TestConnectorSlowWindowProbeAsksAgain(t *testing.T) {
	var (
		mu    sync.Mutex
		props int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/props" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		props++
		first := props == 1
		mu.Unlock()
		if first {
			<-r.Context().Done() // past the probe's bound
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"default_generation_settings":{"n_ctx":8192}}`))
	}))
	defer srv.Close()
	c := llm.NewConnector(llm.ConnectorOptions{BaseURL: srv.URL + "/v1", Provider: llm.ProviderLlamaCpp, Model: "m", ProbeTimeout: 200 * time.Millisecond})
	defer c.Close()
	c.Window()
	<-c.Probed()
	if c.WindowUnknown() {
		t.Fatal("a probe that timed out made the window unknown: the user is told the server does not say it")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if n, src := c.Window(); n == 8192 && src == "llama.cpp /props" {
			break
		}
		if time.Now().After(deadline) {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("window still unknown 10 s after a slow probe (%d probes): not asked again before ReprobeEvery", props)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
