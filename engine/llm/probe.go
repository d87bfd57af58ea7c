package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc"
	"github.com/sourcegraph/conc/panics"
)

// ContextWindow asks the server how many tokens model's context holds
// and says where the number came from. The configured window, when
// there is one, wins and is handled by the caller; this is the probe.
// Each provider exposes it differently:
//
//   - llama.cpp: GET /props (at the server root, not under /v1)
//     default_generation_settings.n_ctx — per slot, what a request gets;
//   - Ollama: GET /api/ps context_length (as loaded), else POST /api/show
//     model_info["<arch>.context_length"] (the model's maximum);
//   - Docker Model Runner: GET /models/{name} config.context_size (DMR does
//     not proxy /props);
//   - LM Studio: GET /api/v1/models loaded_instances[].config.context_length;
//   - vLLM: GET /v1/models max_model_len.
//
// An unknown provider tries llama.cpp's /props then the vLLM field. When
// nothing answers with a number, the error wraps ErrUnknownWindow.
func (c *Client) ContextWindow(ctx context.Context, model string) (n int, source string, err error) {
	type probe struct {
		source string
		run    func(context.Context, string) (int, error)
	}
	var probes []probe
	switch c.opts.Provider {
	case ProviderLlamaCpp:
		probes = []probe{{"llama.cpp /props", c.llamaProps}}
	case ProviderOllama:
		probes = []probe{{"ollama /api/ps (as loaded)", c.ollamaPS}, {"ollama /api/show (model maximum)", c.ollamaShow}}
	case ProviderDMR:
		probes = []probe{{"docker model runner /models", c.dmrModel}}
	case ProviderLMStudio:
		probes = []probe{{"lm studio /api/v1/models (as loaded)", c.lmStudio}}
	case ProviderVLLM:
		probes = []probe{{"vllm /v1/models max_model_len", c.vllmModels}}
	case ProviderOpenAI:
	default:
		probes = []probe{{"llama.cpp /props", c.llamaProps}, {"/v1/models max_model_len", c.vllmModels}}
	}
	var errs []error
	for _, p := range probes {
		n, err := p.run(ctx, model)
		if err == nil && n > 0 {
			return n, p.source, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return 0, "", fmt.Errorf("llm: context window: %w", ctx.Err())
			}
			errs = append(errs, fmt.Errorf("%s: %w", p.source, err))
		}
	}
	if len(errs) == 0 {
		return 0, "", fmt.Errorf("%w (%s says none)", ErrUnknownWindow, c.opts.Provider)
	}
	return 0, "", fmt.Errorf("%w (%s)", ErrUnknownWindow, errors.Join(errs...))
}

func (c *Client) llamaProps(ctx context.Context, model string) (int, error) {
	var props struct {
		DefaultGenerationSettings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	err := c.getJSON(ctx, c.root+"/props", &props)
	if err != nil && model != "" {
		// llama-server in router mode answers per model.
		err = c.getJSON(ctx, c.root+"/props?model="+url.QueryEscape(model), &props)
	}
	return props.DefaultGenerationSettings.NCtx, err
}

// ThinkingSwitch asks llama-server whether model's chat template reads
// enable_thinking — a switch that turns its reasoning on and off, where
// reasoning_effort means nothing to it. The template is the server's own
// answer (GET /props chat_template), not a guess from the model's name.
func (c *Client) ThinkingSwitch(ctx context.Context, model string) (bool, error) {
	var props struct {
		ChatTemplate string `json:"chat_template"`
	}
	err := c.getJSON(ctx, c.root+"/props", &props)
	if err != nil && model != "" {
		err = c.getJSON(ctx, c.root+"/props?model="+url.QueryEscape(model), &props)
	}
	return strings.Contains(props.ChatTemplate, "enable_thinking"), err
}

// sameModel compares model names the way Ollama does: "qwen3" is
// "qwen3:latest".
func sameModel(a, b string) bool {
	norm := func(s string) string {
		if !strings.Contains(s, ":") {
			s += ":latest"
		}
		return s
	}
	return a == b || norm(a) == norm(b)
}

func (c *Client) ollamaPS(ctx context.Context, model string) (int, error) {
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			Model         string `json:"model"`
			ContextLength int    `json:"context_length"`
		} `json:"models"`
	}
	if err := c.getJSON(ctx, c.root+"/api/ps", &ps); err != nil {
		return 0, err
	}
	for _, m := range ps.Models {
		if sameModel(m.Name, model) || sameModel(m.Model, model) {
			return m.ContextLength, nil
		}
	}
	return 0, nil // not loaded yet: ask /api/show
}

func (c *Client) ollamaShow(ctx context.Context, model string) (int, error) {
	var show struct {
		ModelInfo map[string]any `json:"model_info"`
	}
	if err := c.doJSON(ctx, http.MethodPost, c.root+"/api/show", map[string]string{"model": model}, &show); err != nil {
		return 0, err
	}
	arch, _ := show.ModelInfo["general.architecture"].(string)
	if v, ok := show.ModelInfo[arch+".context_length"].(float64); ok {
		return int(v), nil
	}
	for k, v := range show.ModelInfo {
		if f, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") {
			return int(f), nil
		}
	}
	return 0, nil
}

func (c *Client) dmrModel(ctx context.Context, model string) (int, error) {
	var m struct {
		Config struct {
			ContextSize int `json:"context_size"`
		} `json:"config"`
	}
	if err := c.getJSON(ctx, c.root+"/models/"+model, &m); err != nil {
		return 0, err
	}
	return m.Config.ContextSize, nil
}

func (c *Client) lmStudio(ctx context.Context, model string) (int, error) {
	var list struct {
		Models []struct {
			Key             string `json:"key"`
			LoadedInstances []struct {
				ID     string `json:"id"`
				Config struct {
					ContextLength int `json:"context_length"`
				} `json:"config"`
			} `json:"loaded_instances"`
		} `json:"models"`
	}
	if err := c.getJSON(ctx, c.root+"/api/v1/models", &list); err != nil {
		return 0, err
	}
	for _, m := range list.Models {
		for _, li := range m.LoadedInstances {
			if m.Key == model || li.ID == model {
				return li.Config.ContextLength, nil
			}
		}
	}
	return 0, nil
}

func (c *Client) vllmModels(ctx context.Context, model string) (int, error) {
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := c.getJSON(ctx, c.base+"/models", &list); err != nil {
		return 0, err
	}
	for _, m := range list.Data {
		if m.ID == model || (model == "" && len(list.Data) == 1) {
			return m.MaxModelLen, nil
		}
	}
	return 0, nil
}

// Endpoint is a place where a local model server usually listens.
type Endpoint struct {
	Provider string
	BaseURL  string // the OpenAI API base, as a config would hold it
	Probe    string // a cheap GET that only this kind of server answers with 200
}

// LocalEndpoints are the usual local servers, in order of preference.
func LocalEndpoints() []Endpoint {
	return []Endpoint{
		{ProviderLlamaCpp, "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/props"},
		{ProviderOllama, "http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/api/version"},
		{ProviderDMR, "http://127.0.0.1:12434/engines/v1", "http://127.0.0.1:12434/engines/v1/models"},
		{ProviderLMStudio, "http://127.0.0.1:1234/v1", "http://127.0.0.1:1234/v1/models"},
	}
}

// DetectFrom probes the given endpoints (LocalEndpoints: the usual local
// servers) in parallel and returns the first one, in their order, that
// answers. hc may be nil. Each probe gets at most
// 1.5 s; all run at once and all are joined before it returns. When none
// answers, the error wraps ErrNoServer and lists what was tried.
func DetectFrom(ctx context.Context, hc *http.Client, eps []Endpoint) (provider, baseURL string, err error) {
	if hc == nil {
		hc = &http.Client{}
	}
	ctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	ok := make([]bool, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { ok[i] = answers(ctx, hc, ep.Probe) })
	}
	wg.Wait()
	for i, ep := range eps {
		if ok[i] {
			return ep.Provider, ep.BaseURL, nil
		}
	}
	var tried []string
	for _, ep := range eps {
		tried = append(tried, ep.Provider+" "+hostOf(ep.BaseURL))
	}
	return "", "", fmt.Errorf("%w (tried %s)", ErrNoServer, strings.Join(tried, ", "))
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return u
}

// answers reports whether GET u returns 200 (503 counts: llama-server
// answers it while loading the model, and it is the right server).
func answers(ctx context.Context, hc *http.Client, u string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	drain(resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusServiceUnavailable
}

// KnownEndpoints are the usual local servers offered to the user to choose
// from (ACP providers/list): LocalEndpoints, and vLLM on its port 8000,
// which mm does not try on its own at start — 8000 is also where
// development web servers listen — but lists when it serves an OpenAI
// model list.
func KnownEndpoints() []Endpoint {
	return append(LocalEndpoints(), Endpoint{ProviderVLLM, "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/models"})
}

// Reach is what a survey found at one endpoint.
type Reach struct {
	Endpoint
	// Answers: GET {BaseURL}/models returned an OpenAI model list (a
	// "data" array), which every server mm speaks to serves.
	Answers bool
	// Models are the ids of the served models.
	Models []string
}

// SurveyTimeout bounds a whole survey: the endpoints are local, so a
// server that takes longer is not one to choose now.
const SurveyTimeout = time.Second

// Survey asks every endpoint for its model list, all at once within
// SurveyTimeout, and joins every request before it returns; the result
// is in eps's order. hc may be nil. Nothing is cached: the user asks
// because a server was started or stopped.
func Survey(ctx context.Context, hc *http.Client, eps []Endpoint) []Reach {
	if hc == nil {
		hc = &http.Client{}
	}
	ctx, cancel := context.WithTimeout(ctx, SurveyTimeout)
	defer cancel()
	out := make([]Reach, len(eps))
	var wg conc.WaitGroup
	for i, ep := range eps {
		out[i].Endpoint = ep
		wg.Go(func() {
			// A strange answer that panics a decoder is a server that
			// does not answer, not a crash of the agent.
			_ = panics.Try(func() {
				c := New(Options{BaseURL: ep.BaseURL, HTTPClient: hc, RetryDelays: []time.Duration{}})
				var list struct {
					Data *[]struct {
						ID string `json:"id"`
					} `json:"data"`
				}
				if c.getJSON(ctx, c.base+"/models", &list) != nil || list.Data == nil {
					return
				}
				out[i].Answers = true
				for _, m := range *list.Data {
					if m.ID != "" {
						out[i].Models = append(out[i].Models, m.ID)
					}
				}
			})
		})
	}
	wg.Wait()
	return out
}
