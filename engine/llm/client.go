package llm

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Providers known to the client. They differ in which non-standard fields
// a request may carry and where the context window is probed.
const (
	ProviderLlamaCpp = "llamacpp"
	ProviderDMR      = "dmr"
	ProviderOllama   = "ollama"
	ProviderLMStudio = "lmstudio"
	ProviderVLLM     = "vllm"
	ProviderOpenAI   = "openai"
)

// Default timings of the watchdog and of the retries.
const (
	DefaultFirstTokenTimeout = 3 * time.Minute
	DefaultIdleTimeout       = 30 * time.Second
	DefaultBaseURL           = "http://127.0.0.1:8080/v1"
)

// DefaultRetryDelays are the waits before the 1st, 2nd and 3rd retry.
func DefaultRetryDelays() []time.Duration {
	return []time.Duration{800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond}
}

// Options configure a Client. Every zero value is a usable default.
type Options struct {
	// Provider is one of the Provider constants; "" is a generic
	// OpenAI-compatible server (no non-standard request fields).
	Provider string
	// BaseURL of the OpenAI API, usually ending in /v1; "" is
	// DefaultBaseURL (llama-server).
	BaseURL string
	// APIKey is sent as a bearer token when not empty. The environment is
	// never read here (only cmd/ reads it).
	APIKey string
	// HTTPClient; nil is a client without timeout (streams are long; the
	// watchdog bounds them).
	HTTPClient *http.Client
	// FirstTokenTimeout bounds the wait for the first token of each call;
	// prompt_progress chunks restart it. 0 is DefaultFirstTokenTimeout,
	// negative disables it.
	FirstTokenTimeout time.Duration
	// IdleTimeout bounds the wait between tokens after the first one.
	// 0 is DefaultIdleTimeout, negative disables it.
	IdleTimeout time.Duration
	// RetryDelays are the waits before each retry of a call that failed
	// before delivering anything; nil is DefaultRetryDelays, an empty
	// non-nil slice disables retries.
	RetryDelays []time.Duration
	// OnRetry, when set, is called before each retry (attempt counts from
	// 1) so that the caller can show it.
	OnRetry func(attempt int, err error)
	// Logger receives debug lines; nil discards them.
	Logger *slog.Logger
}

// Client talks to one OpenAI-compatible chat-completions server.
// It is safe for concurrent use.
type Client struct {
	opts  Options
	oa    openai.Client
	hc    *http.Client
	base  string // BaseURL without trailing slash
	root  string // the server root: BaseURL without /v1 (or /engines/…/v1 for DMR)
	log   *slog.Logger
	first time.Duration
	idle  time.Duration
	clock clock // the watchdog's timers; tests replace it
}

// New returns a client for opts.
func New(opts Options) *Client {
	c := &Client{opts: opts, hc: opts.HTTPClient, log: opts.Logger, clock: realClock{}}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	c.base = strings.TrimRight(opts.BaseURL, "/")
	c.root = serverRoot(c.base)
	c.first = pick(opts.FirstTokenTimeout, DefaultFirstTokenTimeout)
	c.idle = pick(opts.IdleTimeout, DefaultIdleTimeout)
	if opts.RetryDelays == nil {
		opts.RetryDelays = DefaultRetryDelays()
	}
	c.opts = opts
	// openai-go retries on its own by default, with its own delays and
	// without knowing whether anything was shown: mm retries itself.
	// The API key is always set, even empty, so that OPENAI_API_KEY from
	// the environment never leaks into a local server's requests.
	c.oa = openai.NewClient(
		option.WithBaseURL(c.base+"/"),
		option.WithAPIKey(opts.APIKey),
		option.WithHTTPClient(c.hc),
		option.WithMaxRetries(0),
	)
	return c
}

func pick(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// serverRoot strips the API path from a base URL: llama-server serves
// /props and /health at its root, Ollama /api/*, DMR /models/*.
func serverRoot(base string) string {
	for _, suffix := range []string{"/v1"} {
		if strings.HasSuffix(base, suffix) {
			base = strings.TrimSuffix(base, suffix)
			break
		}
	}
	if i := strings.Index(base, "/engines"); i >= 0 {
		base = base[:i]
	}
	return base
}

// Provider is the configured provider.
func (c *Client) Provider() string { return c.opts.Provider }

// BaseURL is the API base URL in use.
func (c *Client) BaseURL() string { return c.base }

// Stream sends req as a streaming request and calls on for each delta in
// order, on the caller's goroutine. If on returns an error, the generation
// is aborted at once (the connection is closed, the server stops) and
// Stream returns that error wrapped (errors.Is works). It returns the
// assembled Response, also on error (what arrived before it).
//
// Retries: a network error, HTTP 429/502/503/504, or a stream that
// ended without finish_reason is retried up to len(RetryDelays) times,
// only while no content, reasoning or tool-call delta has been delivered
// (prompt progress does not count: it shows no byte of the answer). 500
// is never retried: llama.cpp uses it for deterministic failures. Errors
// inside the stream (*StreamError) and stalls (*StallError) are not
// retried here: the engine decides.
func (c *Client) Stream(ctx context.Context, req Request, on func(Delta) error) (Response, error) {
	if on == nil {
		on = func(Delta) error { return nil }
	}
	return c.withRetries(ctx, func(ctx context.Context, delivered *bool) (Response, error) {
		return c.streamOnce(ctx, req, func(d Delta) error {
			if d.Progress == nil {
				*delivered = true
			}
			return on(d)
		})
	})
}

// Complete sends req without streaming and returns the whole answer. It
// is retried like Stream (nothing is ever shown before it returns). No
// watchdog applies: the caller's context bounds it.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	return c.withRetries(ctx, func(ctx context.Context, _ *bool) (Response, error) {
		return c.completeOnce(ctx, req)
	})
}

func (c *Client) withRetries(ctx context.Context, call func(context.Context, *bool) (Response, error)) (Response, error) {
	for attempt := 0; ; attempt++ {
		delivered := false
		resp, err := call(ctx, &delivered)
		if err == nil || delivered || attempt >= len(c.opts.RetryDelays) || !retryable(err) || ctx.Err() != nil {
			return resp, err
		}
		c.log.Info("llm: retrying", "attempt", attempt+1, "err", err)
		if c.opts.OnRetry != nil {
			c.opts.OnRetry(attempt+1, err)
		}
		t := time.NewTimer(c.opts.RetryDelays[attempt])
		select {
		case <-ctx.Done():
			t.Stop()
			return resp, errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
}

// retryable: network failures and the statuses that mean "try again".
func retryable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var te *transportError
	return errors.As(err, &te)
}

// Models lists the ids the server serves (GET /models).
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		// Ollama's /api/tags shape, in case the base URL is the root.
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := c.getJSON(ctx, c.base+"/models", &out); err != nil {
		return nil, err
	}
	var ids []string
	for _, m := range out.Data {
		ids = append(ids, m.ID)
	}
	for _, m := range out.Models {
		ids = append(ids, m.Name)
	}
	return ids, nil
}

// drain reads what is left of a body so that the connection can be
// reused, up to a bound.
func drain(r io.Reader) { _, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<10)) }
