// Package oneshot is the one bounded JSON request mm's classifier clients
// make — a decision model's /v1/systemone (engine/decide), a guard model's
// chat completion (engine/risk): post, read a bounded answer, and tell a
// timeout, a cancel and an unreachable server apart. Its Error and Kind
// are every classifier client's, so that each client only words what its
// own server's answers mean. It is a leaf: those clients are
// leaves too, and may import it alone.
package oneshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Request is one POST of Body as JSON to URL.
type Request struct {
	URL    string
	APIKey string // sent as a bearer token when set
	Body   any
	// Name is what the user lines call the server: "decision" gives "no
	// decision server answered at …".
	Name string
	// Server is the base URL the user configured, which the lines name
	// (empty: URL).
	Server string
	// Timeout bounds the request, answer included.
	Timeout time.Duration
	// HTTP is the client used (nil: http.DefaultClient).
	HTTP *http.Client
	// Limit bounds the answer read, in bytes (0: 1 MiB).
	Limit int64
}

// Kind says what went wrong with a classifier call. The kinds are one
// table for every classifier client, so that a caller tells a cancel or a
// timeout apart the same way whichever model it asked.
type Kind int

// Kinds of failure.
const (
	// Unreachable: no server answered (connection refused, DNS, a bad
	// URL), or the answer broke off.
	Unreachable Kind = iota + 1
	// Timeout: no answer within the request's timeout.
	Timeout
	// Cancelled: the caller's context ended.
	Cancelled
	// RouteMissing: the server has no such route (404): too old, or not
	// a server of that kind.
	RouteMissing
	// ModelMissing: the server does not have the model (Ollama: not
	// pulled).
	ModelMissing
	// WrongModel: the server answered, but its model is not the kind of
	// classifier asked: a chat model asked a decision, or a model that
	// does not answer a guard question with yes or no.
	WrongModel
	// Invalid: the server refused the question (too many options, a
	// state larger than the context…).
	Invalid
	// Busy: the server's queue is full (429).
	Busy
	// Malformed: an answer that is not a valid answer to the question,
	// or a question that cannot be written as JSON.
	Malformed
	// ServerError: any other error status.
	ServerError
)

// Error is a failed classifier call; Line is the one line for the user.
type Error struct {
	Kind   Kind
	Status int // HTTP status, 0 when none
	Line   string
}

func (e *Error) Error() string { return e.Line }

// Line is the one line for the user of a failed call: an *Error's own
// line, else the error's text.
func Line(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Line
	}
	return err.Error()
}

// IsCancelled reports whether err is the caller's own cancel: no failure
// to tell the user about.
func IsCancelled(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == Cancelled
}

// Post sends r within ctx and returns the status and the answer's bytes,
// or an *Error saying why there is none, in one line naming the server.
// An error status is an answer: the caller reads its body
// (ServerMessage).
func Post(ctx context.Context, r Request) (status int, raw []byte, err error) {
	body, err := json.Marshal(r.Body)
	if err != nil {
		return 0, nil, &Error{Kind: Malformed, Line: "the " + r.Name + " question cannot be written as JSON: " + err.Error()}
	}
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.Timeout)
		defer cancel()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, &Error{Kind: Unreachable, Line: fmt.Sprintf("bad %s server URL %q: %s", r.Name, r.server(), err)}
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
		return 0, nil, r.transport(ctx, err)
	}
	defer resp.Body.Close()
	limit := r.Limit
	if limit <= 0 {
		limit = 1 << 20
	}
	raw, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return 0, nil, r.transport(ctx, err)
	}
	// A server that echoes the key must not put it into what the user
	// or the model reads.
	if len(r.APIKey) >= 4 {
		raw = bytes.ReplaceAll(raw, []byte(r.APIKey), []byte("[redacted]"))
	}
	return resp.StatusCode, raw, nil
}

// transport words a request that got no answer. The unreachable line
// gives the error's last words ("connection refused"), not Go's whole
// chain with the URL again.
func (r Request) transport(ctx context.Context, err error) *Error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{Kind: Timeout, Line: fmt.Sprintf("the %s model at %s did not answer within %s (a model still loading, or a slow machine: raise timeout)", r.Name, r.server(), r.Timeout)}
	case ctx.Err() != nil:
		return &Error{Kind: Cancelled, Line: "cancelled"}
	}
	return &Error{Kind: Unreachable, Line: fmt.Sprintf("no %s server answered at %s (%s) — start it, or fix baseURL in the agent file", r.Name, r.server(), cause(err))}
}

func (r Request) server() string {
	if r.Server != "" {
		return r.Server
	}
	return r.URL
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
