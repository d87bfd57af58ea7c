package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/internal/testenv"
)

func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scenario string
		requests int    // how many the server must see
		ok       bool   // whether Stream succeeds
		retries  int    // OnRetry calls
		class    string // Classify of the final error
	}{
		{"503 loading twice then ok", `
steps:
  - http_error: {status: 503, body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}', times: 2}
    content: ready`, 3, true, 2, ""},
		{"429 once", `
steps:
  - http_error: {status: 429, body: '{"error":{"code":429,"message":"slots busy"}}', times: 1}
    content: ready`, 2, true, 1, ""},
		{"502 once", `
steps:
  - http_error: {status: 502, body: 'Bad Gateway', content_type: text/plain, times: 1}
    content: ready`, 2, true, 1, ""},
		{"504 once", `
steps:
  - http_error: {status: 504, body: 'Gateway Timeout', content_type: text/plain, times: 1}
    content: ready`, 2, true, 1, ""},
		{"503 more than three times", `
steps:
  - http_error: {status: 503, body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}', times: 9}
    content: ready`, 4, false, 3, "loading"},
		{"500 is never retried", `
steps:
  - http_error: {status: 500, body: '{"error":{"code":500,"message":"Failed to parse input at pos 12","type":"server_error"}}', times: 1}
    content: ready`, 1, false, 0, "parse_failure"},
		{"400 is never retried", `
steps:
  - http_error: {status: 400, body: '{"error":{"code":400,"message":"tools param requires --jinja flag","type":"invalid_request_error"}}', times: 1}
    content: ready`, 1, false, 0, "tools_rejected"},
		{"stream cut before any token is retried", `
steps:
  - {finish_reason: none, no_done: true}
  - content: ready`, 2, true, 1, ""},
		{"stream cut after a token is not", `
steps:
  - {content: "half", finish_reason: none, no_done: true}
  - content: ready`, 1, false, 0, "no_finish"},
		{"error inside the stream is not retried here", `
steps:
  - {stream_error: {after: 1}}
  - content: ready`, 1, false, 0, "stream_error"},
		{"progress shown does not forbid a retry", `
steps:
  - {progress: {chunks: 2}, finish_reason: none, no_done: true}
  - content: ready`, 2, true, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, o := fastOn(t, tc.scenario)
			var attempts []int
			o.OnRetry = func(n int, err error) { attempts = append(attempts, n) }
			r, err := llm.New(o).Stream(context.Background(), hello(), nil)
			if got := len(srv.Requests()); got != tc.requests {
				t.Errorf("%d requests, want %d", got, tc.requests)
			}
			if len(attempts) != tc.retries {
				t.Errorf("OnRetry calls %v, want %d", attempts, tc.retries)
			}
			if tc.ok {
				if err != nil || r.Content != "ready" {
					t.Fatalf("Stream = %q, %v", r.Content, err)
				}
				return
			}
			if err == nil {
				t.Fatal("Stream succeeded")
			}
			if got := string(llm.Classify(err)); got != tc.class {
				t.Errorf("Classify(%v) = %s, want %s", err, got, tc.class)
			}
		})
	}
}

func TestRetryDelaysAreWaited(t *testing.T) {
	_, o := fastOn(t, `
steps:
  - http_error: {status: 503, body: 'busy', times: 2}
    content: ready`)
	o.RetryDelays = []time.Duration{30 * time.Millisecond, 60 * time.Millisecond}
	start := time.Now()
	if _, err := llm.New(o).Stream(context.Background(), hello(), nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Fatalf("two retries took %s, want at least 90ms", d)
	}
}

func TestRetryWaitEndsWithContext(t *testing.T) {
	_, o := fastOn(t, "steps:\n  - http_error: {status: 503, body: busy, times: 5}\n    content: x\n")
	o.RetryDelays = []time.Duration{time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	o.OnRetry = func(int, error) { cancel() }
	_, err := llm.New(o).Stream(ctx, hello(), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestNoRetryDelaysMeansNoRetry(t *testing.T) {
	srv, o := fastOn(t, "steps:\n  - http_error: {status: 503, body: busy, times: 1}\n    content: x\n")
	o.RetryDelays = []time.Duration{}
	if _, err := llm.New(o).Stream(context.Background(), hello(), nil); err == nil || len(srv.Requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(srv.Requests()))
	}
}

func TestConnectionRefused(t *testing.T) {
	addr := strings.TrimPrefix(testenv.RefusedURL(t), "http://")
	retries := 0
	c := llm.New(llm.Options{
		BaseURL:     "http://" + addr + "/v1",
		RetryDelays: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond},
		OnRetry:     func(int, error) { retries++ },
	})
	_, err := c.Stream(context.Background(), hello(), nil)
	if err == nil {
		t.Fatal("no error")
	}
	if retries != 3 {
		t.Errorf("%d retries of a network error, want 3", retries)
	}
	if llm.Classify(err) != llm.ClassNoServer {
		t.Errorf("Classify = %s", llm.Classify(err))
	}
	got := llm.Explain(err)
	testenv.WantIn(t, "Explain", got, addr, "llama-server", "--jinja")
}
