package llm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// route is one canned answer of an emulated server: "METHOD /path?query".
type routes map[string]string

// emulate serves the routes and records which were asked for.
func emulate(t *testing.T, r routes) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		key := req.Method + " " + req.URL.Path
		if req.URL.RawQuery != "" {
			key += "?" + req.URL.RawQuery
		}
		if req.Method == http.MethodPost {
			b, _ := io.ReadAll(req.Body)
			key += " " + string(b)
		}
		mu.Lock()
		asked = append(asked, key)
		mu.Unlock()
		body, ok := r[key]
		if !ok {
			http.Error(w, `{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

func TestContextWindow(t *testing.T) {
	for _, tc := range []struct {
		name, provider, apiPath, model string
		routes                         routes
		want                           int
		source                         string
	}{
		{"llama.cpp /props at the root", llm.ProviderLlamaCpp, "/v1", "qwen", routes{
			"GET /props": `{"default_generation_settings":{"n_ctx":32768,"params":{}},"total_slots":1}`,
		}, 32768, "llama.cpp /props"},
		{"llama.cpp router mode asks per model", llm.ProviderLlamaCpp, "/v1", "qwen", routes{
			"GET /props?model=qwen": `{"default_generation_settings":{"n_ctx":16384}}`,
		}, 16384, "llama.cpp /props"},
		{"Ollama /api/ps as loaded", llm.ProviderOllama, "/v1", "qwen3", routes{
			"GET /api/ps": `{"models":[{"name":"gemma3:latest","model":"gemma3:latest","context_length":2048},{"name":"qwen3:latest","model":"qwen3:latest","size":5000,"context_length":8192}]}`,
		}, 8192, "ollama /api/ps (as loaded)"},
		{"Ollama /api/show when not loaded", llm.ProviderOllama, "/v1", "qwen3:4b", routes{
			"GET /api/ps":                         `{"models":[]}`,
			`POST /api/show {"model":"qwen3:4b"}`: `{"model_info":{"general.architecture":"qwen3","qwen3.context_length":40960,"qwen3.embedding_length":2560}}`,
		}, 40960, "ollama /api/show (model maximum)"},
		{"Docker Model Runner /models/{name}", llm.ProviderDMR, "/engines/v1", "ai/qwen3:4B", routes{
			"GET /models/ai/qwen3:4B": `{"id":"sha256:abc","tags":["ai/qwen3:4B"],"config":{"format":"gguf","context_size":8192}}`,
		}, 8192, "docker model runner /models"},
		{"LM Studio loaded instance", llm.ProviderLMStudio, "/v1", "qwen/qwen3-4b", routes{
			"GET /api/v1/models": `{"models":[{"type":"llm","key":"qwen/qwen3-4b","max_context_length":32768,"loaded_instances":[{"id":"qwen/qwen3-4b","config":{"context_length":4096}}]}]}`,
		}, 4096, "lm studio /api/v1/models (as loaded)"},
		{"vLLM max_model_len", llm.ProviderVLLM, "/v1", "Qwen/Qwen3-4B", routes{
			"GET /v1/models": `{"object":"list","data":[{"id":"Qwen/Qwen3-4B","object":"model","max_model_len":32768}]}`,
		}, 32768, "vllm /v1/models max_model_len"},
		{"unknown provider falls back on max_model_len", "", "/v1", "m", routes{
			"GET /v1/models": `{"data":[{"id":"m","max_model_len":2048}]}`,
		}, 2048, "/v1/models max_model_len"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := emulate(t, tc.routes)
			c := llm.New(llm.Options{Provider: tc.provider, BaseURL: srv.URL + tc.apiPath})
			n, source, err := c.ContextWindow(context.Background(), tc.model)
			if err != nil || n != tc.want || source != tc.source {
				t.Fatalf("ContextWindow = %d, %q, %v; want %d, %q", n, source, err, tc.want, tc.source)
			}
		})
	}
}

func TestContextWindowUnknown(t *testing.T) {
	for _, tc := range []struct {
		name, provider string
		routes         routes
		asks           int
	}{
		{"remote OpenAI is not probed", llm.ProviderOpenAI, routes{}, 0},
		{"llama.cpp without /props", llm.ProviderLlamaCpp, routes{}, 2},
		{"Ollama model absent everywhere", llm.ProviderOllama, routes{"GET /api/ps": `{"models":[]}`}, 2},
		{"vLLM without the model", llm.ProviderVLLM, routes{"GET /v1/models": `{"data":[{"id":"other","max_model_len":5}]}`}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, asked := emulate(t, tc.routes)
			c := llm.New(llm.Options{Provider: tc.provider, BaseURL: srv.URL + "/v1"})
			n, _, err := c.ContextWindow(context.Background(), "m")
			if !errors.Is(err, llm.ErrUnknownWindow) || n != 0 {
				t.Fatalf("ContextWindow = %d, %v; want ErrUnknownWindow", n, err)
			}
			if got := len(asked()); got != tc.asks {
				t.Errorf("%d requests %v, want %d", got, asked(), tc.asks)
			}
			if !strings.Contains(llm.Explain(err), "contextWindow") {
				t.Errorf("Explain = %q", llm.Explain(err))
			}
		})
	}
}

func TestContextWindowFromFakellm(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{NCtx: 4096})
	defer srv.Close()
	n, src, err := llm.New(llm.Options{Provider: llm.ProviderLlamaCpp, BaseURL: srv.URL()}).ContextWindow(context.Background(), "m")
	if err != nil || n != 4096 || src != "llama.cpp /props" {
		t.Fatalf("ContextWindow = %d, %q, %v", n, src, err)
	}
}

func TestDetect(t *testing.T) {
	ollama, _ := emulate(t, routes{"GET /api/version": `{"version":"0.12.0"}`})
	lmstudio, _ := emulate(t, routes{"GET /v1/models": `{"data":[]}`})
	nothing, _ := emulate(t, routes{}) // answers 404 to everything: not a model server
	loading := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`, http.StatusServiceUnavailable)
	}))
	defer loading.Close()
	eps := func(llamaProbe string) []llm.Endpoint {
		return []llm.Endpoint{
			{Provider: llm.ProviderLlamaCpp, BaseURL: "llama/v1", Probe: llamaProbe},
			{Provider: llm.ProviderOllama, BaseURL: ollama.URL + "/v1", Probe: ollama.URL + "/api/version"},
			{Provider: llm.ProviderLMStudio, BaseURL: lmstudio.URL + "/v1", Probe: lmstudio.URL + "/v1/models"},
		}
	}
	for _, tc := range []struct {
		name, llamaProbe, want string
	}{
		{"first answering in order of preference", nothing.URL + "/props", llm.ProviderOllama},
		{"llama-server loading the model is still llama-server", loading.URL + "/props", llm.ProviderLlamaCpp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, base, err := llm.DetectFrom(context.Background(), nil, eps(tc.llamaProbe))
			if err != nil || p != tc.want || base == "" {
				t.Fatalf("DetectFrom = %q, %q, %v; want %s", p, base, err, tc.want)
			}
		})
	}
	t.Run("none answers", func(t *testing.T) {
		_, _, err := llm.DetectFrom(context.Background(), nil, []llm.Endpoint{
			{Provider: llm.ProviderLlamaCpp, BaseURL: "http://127.0.0.1:1/v1", Probe: "http://127.0.0.1:1/props"},
			{Provider: llm.ProviderOllama, BaseURL: nothing.URL + "/v1", Probe: nothing.URL + "/api/version"},
		})
		if !errors.Is(err, llm.ErrNoServer) {
			t.Fatalf("err = %v", err)
		}
		line := llm.Explain(err)
		if !strings.Contains(line, "llama-server") || !strings.Contains(line, "--jinja") || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Fatalf("Explain = %q, err = %v", line, err)
		}
	})
	t.Run("default endpoints are the usual ports", func(t *testing.T) {
		var ports []string
		for _, ep := range llm.LocalEndpoints() {
			ports = append(ports, ep.Provider+"="+ep.BaseURL)
		}
		got := strings.Join(ports, " ")
		testenv.WantIn(t, "LocalEndpoints", got, "llamacpp=http://127.0.0.1:8080/v1", "ollama=http://127.0.0.1:11434/v1", "dmr=http://127.0.0.1:12434/engines/v1", "lmstudio=http://127.0.0.1:1234/v1")
	})
}

func TestServerVersion(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{})
	defer srv.Close()
	c := llm.New(llm.Options{Provider: llm.ProviderLlamaCpp, BaseURL: srv.URL()})
	v, err := c.ServerVersion(context.Background())
	if err != nil || v != "fakellm" {
		t.Errorf("ServerVersion = %q, %v; want llama.cpp's build_info", v, err)
	}
	c = llm.New(llm.Options{Provider: llm.ProviderLMStudio, BaseURL: srv.URL()})
	if v, err := c.ServerVersion(context.Background()); err != nil || v != "" {
		t.Errorf("LM Studio says no version: got %q, %v", v, err)
	}
}
