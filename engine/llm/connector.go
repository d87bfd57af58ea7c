package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc"
	"github.com/sourcegraph/conc/panics"
)

// ConnectorOptions configure a Connector. Zero values are documented per
// field.
type ConnectorOptions struct {
	// Provider is the configured provider; "" detects it from the server
	// behind BaseURL (llama.cpp /props, Ollama /api/version, LM Studio
	// /api/v1/models, vLLM max_model_len, DMR by its /engines path), and
	// falls back on the usual port, then a generic OpenAI API.
	Provider string
	// BaseURL is the configured API base; "" probes the usual local
	// endpoints.
	BaseURL string
	APIKey  string
	// Model is the configured model; "" takes the first one served.
	Model string
	// ContextWindow is the configured window in tokens; 0 probes the
	// server.
	ContextWindow int
	// FirstTokenTimeout and IdleTimeout are passed to the Client.
	FirstTokenTimeout, IdleTimeout time.Duration
	// ProbeTimeout bounds each probe of the server (kind, models, window);
	// 0 means 2 s.
	ProbeTimeout time.Duration
	// ReprobeEvery is the least time between two window probes while the
	// window is unknown (the server may start after mm); 0 means 30 s.
	ReprobeEvery time.Duration
	// Endpoints are probed when BaseURL is empty; nil is LocalEndpoints.
	Endpoints []Endpoint
	// HTTPClient is used for the probes and the client; nil is a default.
	HTTPClient *http.Client
	// RetryDelays are passed to the Client (nil: its default).
	RetryDelays []time.Duration
	// Notice shows a one-time line to the user (which server was found);
	// nil only logs it.
	Notice func(string)
	Logger *slog.Logger
}

// Connector is the lazy connection to the model server: it finds the
// server and its kind, chooses the model and learns the context window,
// caching each answer. It implements the engine's Model. No lock is held
// across I/O, every probe is bounded, and a turn never waits on a window
// probe: Window answers from the cache and starts a probe in the
// background when the window is unknown.
type Connector struct {
	opts ConnectorOptions
	log  *slog.Logger

	mu         sync.Mutex
	client     *Client
	model      string
	window     int
	source     string
	lastProbe  time.Time
	connecting chan struct{} // closed when the connect in flight ends
	connErr    error
	probing    bool
	unknown    bool           // the server was reached and did not say its window
	bg         conc.WaitGroup // the background probes, joined by Close
	closed     bool
	probed     chan struct{} // closed when the first window probe ends
	probedOnce sync.Once
	stop       context.CancelFunc
	bgCtx      context.Context
	// target is the server the user chose over the configured one ("":
	// the configured one); gen counts the changes, so that what a connect
	// or probe learnt of a former server is dropped.
	target string
	gen    uint64
	// switchOf is the client whose chat template was found to have a
	// thinking switch (enable_thinking): nil while unknown or none.
	switchOf *Client
}

// NewConnector returns a connector; nothing is contacted until it is used
// or warmed.
func NewConnector(opts ConnectorOptions) *Connector {
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = 2 * time.Second
	}
	if opts.ReprobeEvery <= 0 {
		opts.ReprobeEvery = 30 * time.Second
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &Connector{opts: opts, log: log, model: opts.Model, bgCtx: ctx, stop: stop, probed: make(chan struct{})}
	if opts.ContextWindow > 0 {
		c.window, c.source = opts.ContextWindow, "config"
	}
	return c
}

// Retarget points the connector at the server at base — the user chose
// it (ACP providers/set) — or back at the configured one when base is ""
// or the configured base. The next request connects there and learns its
// kind, model and window again; the configured key, model and window go
// to the configured server only. Sessions keep their connector, so their
// following turns go to the new server.
func (c *Connector) Retarget(base string) {
	base = strings.TrimRight(base, "/")
	if base == strings.TrimRight(c.opts.BaseURL, "/") {
		base = ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if base == c.target {
		return
	}
	c.log.Info("model server chosen by the user", "baseURL", base)
	c.target, c.gen = base, c.gen+1
	c.client, c.model, c.window, c.source, c.unknown, c.lastProbe = nil, "", 0, "", false, time.Time{}
	if base == "" {
		c.model = c.opts.Model
		if c.opts.ContextWindow > 0 {
			c.window, c.source = c.opts.ContextWindow, "config"
		}
	}
}

// route is the server to connect to: the user's target, else the
// configured one with its key.
func (c *Connector) route() (provider, base, key string, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.target != "" {
		return "", c.target, "", c.gen
	}
	return c.opts.Provider, c.opts.BaseURL, c.opts.APIKey, c.gen
}

// ErrNoLocalServer is returned when no base URL is configured and none of
// the usual local endpoints answers. Its text is the one line.
type ErrNoLocalServer struct{ Tried string }

func (e ErrNoLocalServer) Error() string {
	return "no model server answered (" + e.Tried + ") — " + StartHint() + ", then run `mm setup`: it saves your choice in your own config (~/.config/mm/agent.yaml)"
}

// Unwrap lets errors.Is(err, ErrNoServer) hold.
func (e ErrNoLocalServer) Unwrap() error { return ErrNoServer }

// Warm connects and probes the window in the background (session start),
// so that the first turn finds them ready. It returns at once.
func (c *Connector) Warm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.probeLocked()
}

// Probed is closed when the first background window probe has ended,
// whatever it found (doctor and tests wait on it instead of polling).
func (c *Connector) Probed() <-chan struct{} { return c.probed }

// Close stops the background probes and waits for them.
func (c *Connector) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.stop()
	c.bg.Wait()
}

// Client returns the connected client and the model, connecting if
// needed. Concurrent callers share one connect; each waits at most until
// its ctx ends. The connect runs under the context of the caller that
// started it: when that caller is cancelled, the others do not inherit
// its "context canceled" — one session's cancel must not fail another
// session's turn — they start a connect of their own.
func (c *Connector) Client(ctx context.Context) (*Client, string, error) {
	for {
		c.mu.Lock()
		if c.client != nil && c.model != "" {
			cl, m := c.client, c.model
			c.mu.Unlock()
			return cl, m, nil
		}
		wait := c.connecting
		if wait == nil {
			wait = make(chan struct{})
			c.connecting = wait
			c.mu.Unlock()
			err := c.connect(ctx)
			shared := err
			if ctx.Err() != nil {
				shared = nil // this caller's end, not the server's answer
			}
			c.mu.Lock()
			c.connecting, c.connErr = nil, shared
			c.mu.Unlock()
			close(wait)
			if err != nil {
				return nil, "", err
			}
			continue
		}
		c.mu.Unlock()
		select {
		case <-wait:
			c.mu.Lock()
			err, ok := c.connErr, c.client != nil && c.model != ""
			c.mu.Unlock()
			if !ok && err != nil {
				return nil, "", err
			}
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
	}
}

// connect does the I/O of a connect without holding the lock.
func (c *Connector) connect(ctx context.Context) error {
	c.mu.Lock()
	client, model, gen := c.client, c.model, c.gen
	c.mu.Unlock()
	if client == nil {
		var err error
		if client, err = c.newClient(ctx); err != nil {
			return err
		}
		c.mu.Lock()
		if c.gen == gen { // else retargeted meanwhile: Client connects again
			c.client = client
		}
		c.mu.Unlock()
	}
	if model != "" {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, c.opts.ProbeTimeout)
	defer cancel()
	models, err := client.Models(pctx)
	if err != nil {
		return fmt.Errorf("list the served models: %w", err)
	}
	if len(models) == 0 {
		return fmt.Errorf("the server at %s serves no model; set model in .mm/agent.yaml", client.BaseURL())
	}
	c.log.Info("model chosen", "model", models[0])
	c.mu.Lock()
	if c.model == "" && c.gen == gen {
		c.model = models[0]
	}
	c.mu.Unlock()
	return nil
}

func (c *Connector) newClient(ctx context.Context) (*Client, error) {
	provider, base, key, _ := c.route()
	if base == "" {
		eps := c.opts.Endpoints
		if eps == nil {
			eps = LocalEndpoints()
		}
		p, b, err := DetectFrom(ctx, c.opts.HTTPClient, eps)
		if err != nil {
			var tried []string
			for _, ep := range eps {
				tried = append(tried, ep.Provider+" "+hostOf(ep.BaseURL))
			}
			return nil, ErrNoLocalServer{Tried: "tried " + strings.Join(tried, ", ")}
		}
		if provider == "" {
			provider = p
		}
		base = b
		c.log.Info("model server found", "provider", provider, "baseURL", base)
		if c.opts.Notice != nil {
			c.opts.Notice(fmt.Sprintf("mm: found %s at %s (set baseURL to choose another)", p, base))
		}
	}
	if provider == "" {
		pctx, cancel := context.WithTimeout(ctx, c.opts.ProbeTimeout)
		provider = DetectKind(pctx, c.opts.HTTPClient, base, key)
		cancel()
		c.log.Info("server kind", "provider", provider, "baseURL", base)
	}
	return New(Options{
		Provider:          provider,
		BaseURL:           base,
		APIKey:            key,
		HTTPClient:        c.opts.HTTPClient,
		FirstTokenTimeout: c.opts.FirstTokenTimeout,
		IdleTimeout:       c.opts.IdleTimeout,
		RetryDelays:       c.opts.RetryDelays,
		Logger:            c.opts.Logger,
	}), nil
}

// Stream implements the engine's Model, connecting on first use. A
// request without a model gets the chosen one.
func (c *Connector) Stream(ctx context.Context, req Request, on func(Delta) error) (Response, error) {
	cl, model, err := c.Client(ctx)
	if err != nil {
		return Response{}, err
	}
	if req.Model == "" {
		req.Model = model
	}
	return cl.Stream(ctx, req, on)
}

// Provider is the provider in use, "" before the first connect.
func (c *Connector) Provider() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client == nil {
		if c.target != "" {
			return ""
		}
		return c.opts.Provider
	}
	return c.client.Provider()
}

// Model is the chosen model, "" before the first connect; it never
// connects.
func (c *Connector) Model() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.model
}

// Models lists the served models (bounded by ProbeTimeout).
func (c *Connector) Models(ctx context.Context) ([]string, error) {
	cl, _, err := c.Client(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.ProbeTimeout)
	defer cancel()
	return cl.Models(ctx)
}

// Window is the context window in tokens and where it came from, from the
// cache: 0 and "" while unknown. When unknown it starts a background probe
// (at most every ReprobeEvery), so a server started after mm is learnt.
func (c *Connector) Window() (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.window == 0 && !c.closed && time.Since(c.lastProbe) >= c.opts.ReprobeEvery {
		c.probeLocked()
	}
	return c.window, c.source
}

// WindowUnknown reports that the server was reached and did not say its
// window (a generic OpenAI-compatible API, an old server): mm then budgets
// by count, and the user should be told once. False while it is merely
// not probed yet, or the server not reached (the turn says that itself).
func (c *Connector) WindowUnknown() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.window == 0 && c.unknown
}

// ThinkingSwitch reports that the served model's chat template turns
// thinking on and off (enable_thinking, as Qwen3's does), as the server
// said in the background probe: false while unknown, and for a server
// that does not show its template.
func (c *Connector) ThinkingSwitch() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.client != nil && c.switchOf == c.client
}

// Learn records the window the server itself reported (the n_ctx of an
// overflow error): it replaces a wrong configured or probed one.
func (c *Connector) Learn(nCtx int) {
	if nCtx <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.window != nCtx {
		c.log.Info("context window learnt from the server's error", "tokens", nCtx, "was", c.window)
	}
	c.window, c.source = nCtx, "the server's overflow error"
}

// probeLocked starts one background connect + window probe unless one is
// running. c.mu is held by the caller; the goroutine takes it only to
// store what it learnt.
func (c *Connector) probeLocked() {
	if c.probing {
		return
	}
	c.probing, c.lastProbe = true, time.Now()
	c.bg.Go(func() {
		if r := panics.Try(func() { c.probeWindow(c.bgCtx) }); r != nil {
			c.log.Error("window probe panicked", "panic", r.Value)
		}
		c.mu.Lock()
		c.probing = false
		c.mu.Unlock()
		c.probedOnce.Do(func() { close(c.probed) })
	})
}

func (c *Connector) probeWindow(ctx context.Context) {
	cl, model, err := c.Client(ctx)
	if err != nil {
		c.log.Warn("model server not reached yet", "err", err)
		return
	}
	pctx, cancel := context.WithTimeout(ctx, c.opts.ProbeTimeout)
	defer cancel()
	if cl.opts.Provider == ProviderLlamaCpp {
		if on, err := cl.ThinkingSwitch(pctx, model); err == nil && on {
			c.log.Info("the model's chat template has a thinking switch (enable_thinking)", "model", model)
			c.mu.Lock()
			if c.client == cl {
				c.switchOf = cl
			}
			c.mu.Unlock()
		}
	}
	c.mu.Lock()
	known := c.window > 0
	c.mu.Unlock()
	if known {
		return
	}
	n, source, err := cl.ContextWindow(pctx, model)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		// A server too busy to answer in time has said nothing about its
		// window: ask again at the next call rather than in ReprobeEvery,
		// and do not tell the user the server does not say it.
		c.log.Info("context window not known yet: the server did not answer in time; asking again", "err", err)
		c.mu.Lock()
		c.lastProbe = time.Time{}
		c.mu.Unlock()
		return
	}
	if err != nil {
		c.log.Warn("context window unknown; set contextWindow in the config", "err", err)
		c.mu.Lock()
		c.unknown = c.client == cl // else about a server no longer in use
		c.mu.Unlock()
		return
	}
	c.log.Info("context window", "tokens", n, "source", source)
	c.mu.Lock()
	if c.window == 0 && c.client == cl {
		c.window, c.source = n, source
		c.unknown = false
	}
	c.mu.Unlock()
}

// DetectKind names the server behind an API base URL: DMR by its
// /engines path, else the first of these that answers — llama.cpp's
// /props (with n_ctx), Ollama's /api/version, LM Studio's /api/v1/models,
// vLLM's max_model_len in /v1/models — all asked at once within ctx. When
// none does it guesses from the usual port, else a generic OpenAI API.
func DetectKind(ctx context.Context, hc *http.Client, base, apiKey string) string {
	base = strings.TrimRight(base, "/")
	if strings.Contains(base, "/engines") {
		return ProviderDMR
	}
	probeClient := New(Options{BaseURL: base, APIKey: apiKey, HTTPClient: hc, RetryDelays: []time.Duration{}})
	root := probeClient.root
	type probe struct {
		provider string
		url      string
		ok       func(map[string]any) bool
	}
	probes := []probe{
		{ProviderLlamaCpp, root + "/props", func(m map[string]any) bool {
			_, ok := m["default_generation_settings"]
			return ok
		}},
		{ProviderOllama, root + "/api/version", func(m map[string]any) bool {
			_, ok := m["version"]
			return ok
		}},
		{ProviderLMStudio, root + "/api/v1/models", func(m map[string]any) bool {
			list, _ := m["models"].([]any)
			for _, e := range list {
				if em, _ := e.(map[string]any); em != nil {
					if _, ok := em["loaded_instances"]; ok {
						return true
					}
				}
			}
			return false
		}},
		{ProviderVLLM, base + "/models", func(m map[string]any) bool {
			data, _ := m["data"].([]any)
			for _, e := range data {
				if em, _ := e.(map[string]any); em != nil {
					if _, ok := em["max_model_len"]; ok {
						return true
					}
				}
			}
			return false
		}},
	}
	found := make([]bool, len(probes))
	var wg conc.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			// A probe that panics on a strange answer just finds nothing.
			_ = panics.Try(func() {
				var m map[string]any
				if probeClient.getJSON(ctx, p.url, &m) == nil && m != nil {
					found[i] = p.ok(m)
				}
			})
		})
	}
	wg.Wait()
	for i, p := range probes {
		if found[i] {
			return p.provider
		}
	}
	return guessProvider(base)
}

// guessProvider names the server from its usual port.
func guessProvider(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ProviderOpenAI
	}
	switch u.Port() {
	case "8080":
		return ProviderLlamaCpp
	case "11434":
		return ProviderOllama
	case "12434":
		return ProviderDMR
	case "1234":
		return ProviderLMStudio
	case "8000":
		return ProviderVLLM
	}
	return ProviderOpenAI
}
