// Package oneshot is the one bounded JSON request mm's classifier clients
// make — a decision model's /v1/systemone (engine/decide), a guard model's
// chat completion (engine/risk): post, read a bounded answer, and tell a
// timeout, a cancel and an unreachable server apart, so that each client
// only words the failure for its user. It is a leaf: those clients are
// leaves too, and may import it alone.
package oneshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Request is one POST of Body as JSON to URL.
type Request struct {
	URL    string
	APIKey string // sent as a bearer token when set
	Body   any
	// HTTP is the client used (nil: http.DefaultClient).
	HTTP *http.Client
	// Limit bounds the answer read, in bytes (0: 1 MiB).
	Limit int64
}

// Kind says why no answer came back.
type Kind int

// Kinds of failure.
const (
	// Encode: the body cannot be written as JSON (a bug of the caller).
	Encode Kind = iota + 1
	// BadURL: the URL cannot make a request.
	BadURL
	// Timeout: ctx's deadline passed first.
	Timeout
	// Cancelled: ctx was cancelled.
	Cancelled
	// Unreachable: no server answered, or the answer broke off.
	Unreachable
)

// Failure is a request that got no answer; Cause is its last words
// ("connection refused"), not Go's whole error chain with the URL again.
type Failure struct {
	Kind  Kind
	Cause string
}

// Post sends r within ctx and returns the status and the answer's bytes,
// or why there is none. An error status is an answer: the caller reads
// its body (ServerMessage).
func Post(ctx context.Context, r Request) (status int, raw []byte, fail *Failure) {
	body, err := json.Marshal(r.Body)
	if err != nil {
		return 0, nil, &Failure{Kind: Encode, Cause: err.Error()}
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, &Failure{Kind: BadURL, Cause: err.Error()}
	}
	hr.Header.Set("Content-Type", "application/json")
	if r.APIKey != "" {
		hr.Header.Set("Authorization", "Bearer "+r.APIKey)
	}
	hc := r.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return 0, nil, transport(ctx, err)
	}
	defer resp.Body.Close()
	limit := r.Limit
	if limit <= 0 {
		limit = 1 << 20
	}
	raw, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, transport(ctx, err)
	}
	// A server that echoes the key must not put it into what the user
	// or the model reads.
	if len(r.APIKey) >= 4 {
		raw = bytes.ReplaceAll(raw, []byte(r.APIKey), []byte("[redacted]"))
	}
	return resp.StatusCode, raw, nil
}

func transport(ctx context.Context, err error) *Failure {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Failure{Kind: Timeout}
	case ctx.Err() != nil:
		return &Failure{Kind: Cancelled}
	}
	return &Failure{Kind: Unreachable, Cause: cause(err)}
}

// cause is the last words of a transport error.
func cause(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return Short(msg)
}

// ServerMessage reads the message and type of an error answer in each
// server's shape: llama.cpp's and vLLM's {"error": {"message", "type"}},
// vLLM's older top-level {"message"}, Ollama's {"error": "…"}; anything
// else is the body itself, shortened.
func ServerMessage(raw []byte) (message, typ string) {
	var m struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return Short(string(raw)), ""
	}
	if len(m.Error) == 0 {
		if m.Message != "" {
			return Short(m.Message), ""
		}
		return Short(string(raw)), ""
	}
	var s string
	if json.Unmarshal(m.Error, &s) == nil {
		return Short(s), ""
	}
	var o struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	json.Unmarshal(m.Error, &o)
	if o.Message == "" && o.Type == "" {
		return Short(string(m.Error)), ""
	}
	return Short(o.Message), o.Type
}

// Short folds a text's whitespace and cuts it at 160 characters: the
// most of a server's words one line for the user carries.
func Short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}
