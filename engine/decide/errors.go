package decide

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mm-agent/mm/engine/oneshot"
)

// Kind says what went wrong with a decision call.
type Kind int

// Kinds of failure.
const (
	// Unreachable: no server answered (connection refused, DNS…).
	Unreachable Kind = iota + 1
	// Timeout: no answer within the client's timeout.
	Timeout
	// Cancelled: the caller's context ended.
	Cancelled
	// RouteMissing: the server has no /v1/systemone (too old, or not a
	// server that serves decision models).
	RouteMissing
	// NotDecisionModel: the route exists but the model is a chat model.
	NotDecisionModel
	// ModelMissing: the server does not have the model (Ollama: not
	// pulled).
	ModelMissing
	// Invalid: the server refused the question (too many options, a
	// state larger than the context…).
	Invalid
	// Busy: the server's queue is full (429).
	Busy
	// Malformed: a 200 answer that is not a valid answer to the questions.
	Malformed
	// ServerError: any other error status.
	ServerError
)

// Error is a failed decision call; Line is the one line for the user.
type Error struct {
	Kind   Kind
	Status int // HTTP status, 0 when none
	Line   string
}

func (e *Error) Error() string { return e.Line }

// statusError turns an error answer into its kind and one line.
func (c *Client) statusError(status int, raw []byte) error {
	msg, typ := oneshot.ServerMessage(raw)
	lower := strings.ToLower(msg)
	e := &Error{Status: status}
	where := c.BaseURL
	model := c.Model
	if model == "" {
		model = "the model"
	}
	switch {
	case status == http.StatusNotFound && (typ == "not_found_error" || lower == "file not found" || lower == "404 page not found" || msg == ""):
		e.Kind = RouteMissing
		e.Line = fmt.Sprintf("the server at %s has no /v1/systemone route (404): it cannot serve decision models — llama-server b11361 or later, or Ollama 0.35 or later, can", where)
	case status == http.StatusNotFound:
		e.Kind = ModelMissing
		e.Line = fmt.Sprintf("the server at %s does not have %s: %s (pull it, or fix model in the agent file)", where, model, msg)
	case status == http.StatusNotImplemented || typ == "not_supported_error" || strings.Contains(lower, "not a decision model") ||
		strings.Contains(lower, "decision") && (strings.Contains(lower, "support") || strings.Contains(lower, "capab")):
		e.Kind = NotDecisionModel
		e.Line = fmt.Sprintf("%s at %s is not a decision model (%s) — point the agent file at one, e.g. LiquidAI d1-3B", model, where, msg)
	case status == http.StatusTooManyRequests:
		e.Kind = Busy
		e.Line = fmt.Sprintf("the decision server at %s is busy (429: %s)", where, msg)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		e.Kind = Invalid
		e.Line = fmt.Sprintf("the decision server refused the question (%d: %s)", status, msg)
	default:
		e.Kind = ServerError
		e.Line = fmt.Sprintf("the decision server at %s answered %d: %s", where, status, msg)
	}
	return e
}
