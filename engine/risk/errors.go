package risk

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mm-agent/mm/engine/oneshot"
)

// Kind says what went wrong with a guard call.
type Kind int

// Kinds of failure.
const (
	// Unreachable: no server answered.
	Unreachable Kind = iota + 1
	// Timeout: no answer within the client's timeout.
	Timeout
	// Cancelled: the caller's context ended.
	Cancelled
	// RouteMissing: no chat-completions route at baseURL (404).
	RouteMissing
	// ModelMissing: the server does not have the model.
	ModelMissing
	// NotGuard: the model answered something other than yes or no.
	NotGuard
	// Malformed: a 200 answer that is not a chat completion.
	Malformed
	// ServerError: any other error status.
	ServerError
)

// Error is a failed guard call; Line is the one line for the user.
type Error struct {
	Kind   Kind
	Status int
	Line   string
}

func (e *Error) Error() string { return e.Line }

func (c *Client) statusError(status int, raw []byte) error {
	msg, _ := oneshot.ServerMessage(raw)
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "not found") && strings.Contains(lower, "model"),
		strings.Contains(lower, "try pulling"):
		return &Error{Kind: ModelMissing, Status: status, Line: fmt.Sprintf("the guard server at %s does not have the model (%s) — fix model in the agent file, or pull it", c.BaseURL, msg)}
	case status == http.StatusNotFound:
		return &Error{Kind: RouteMissing, Status: status, Line: fmt.Sprintf("the server at %s has no chat-completions route (404 %s) — baseURL should end in /v1", c.BaseURL, msg)}
	}
	return &Error{Kind: ServerError, Status: status, Line: fmt.Sprintf("the guard server at %s answered %d: %s", c.BaseURL, status, msg)}
}
