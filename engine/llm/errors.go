package llm

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNoFinish: the stream ended (EOF or [DONE]) without any finish_reason.
// The server crashed or a proxy cut the connection; it is a transport
// error, never an empty answer.
var ErrNoFinish = errors.New("llm: the stream ended without a finish_reason")

// ErrNoServer: Detect found no model server on the usual local ports.
var ErrNoServer = errors.New("llm: no model server answered")

// ErrUnknownWindow: ContextWindow could not learn the context window from
// the server (a remote API, or a server that does not say).
var ErrUnknownWindow = errors.New("llm: context window unknown")

// APIError is an HTTP error answer from the server (status >= 400).
type APIError struct {
	Status  int
	Type    string // error.type: "exceed_context_size_error", "invalid_request_error", …
	Code    string // error.code as text: "context_length_exceeded", "400", …
	Message string // error.message, or the body when it is not the usual JSON
	// NPromptTokens and NCtx are the server's own numbers for a context
	// overflow (llama.cpp sends both; vLLM and LM Studio say the window in
	// their text); 0 when unknown.
	NPromptTokens int
	NCtx          int
	// Model is the model the request asked for.
	Model string
	// Served lists the models the server serves; filled for a 404 about the
	// model, so that Explain can name them.
	Served []string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm: server answered %d", e.Status)
	if e.Type != "" {
		fmt.Fprintf(&b, " (%s)", e.Type)
	} else if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(firstLine(e.Message, 300))
	}
	return b.String()
}

// StreamError is an error the server reported inside a 200 stream
// (llama.cpp data: {"error":…}, older "error:" lines, "event: error",
// Ollama's bare JSON line, vLLM's {"object":"error"}). Stream does not
// retry it; the engine may retry that one model call once.
type StreamError struct {
	Message string
	Type    string
	Code    string
	// Raw is the error payload as received, for logs.
	Raw string
}

func (e *StreamError) Error() string {
	s := "llm: the server reported an error inside the stream: " + firstLine(e.Message, 300)
	if e.Type != "" {
		s += " (" + e.Type + ")"
	}
	return s
}

// StallPhase says which watchdog timer expired.
type StallPhase string

// The two phases of the watchdog.
const (
	// StallFirstToken: nothing but prompt progress before the first token
	// for FirstTokenTimeout.
	StallFirstToken StallPhase = "first token"
	// StallIdle: no token for IdleTimeout after the first one.
	StallIdle StallPhase = "idle"
)

// StallError: the watchdog cancelled the generation.
type StallError struct {
	Phase   StallPhase
	Timeout time.Duration
	// Delivered is whether any token had been delivered.
	Delivered bool
}

func (e *StallError) Error() string {
	if e.Phase == StallFirstToken {
		return fmt.Sprintf("llm: stalled: no first token after %s (firstTokenTimeout)", e.Timeout)
	}
	return fmt.Sprintf("llm: stalled: no token for %s (watchdogTimeout)", e.Timeout)
}

// transportError marks a failure of the connection itself (refused, reset,
// cut mid-body, stream ended without finish_reason): these are retried
// while nothing was delivered.
type transportError struct{ err error }

func (e *transportError) Error() string { return "llm: " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

// abortError wraps the error of the caller's callback that stopped the
// generation; errors.Is reaches the caller's error through it.
type abortError struct{ err error }

func (e *abortError) Error() string { return "llm: generation aborted: " + e.err.Error() }
func (e *abortError) Unwrap() error { return e.err }

// firstLine is the first line of s, cut to n bytes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
