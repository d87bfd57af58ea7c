package decide

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mm-agent/mm/engine/oneshot"
)

// statusError turns an error answer into its kind and one line.
func (c *Client) statusError(status int, raw []byte) error {
	msg, typ := oneshot.ServerMessage(raw)
	lower := strings.ToLower(msg)
	e := &oneshot.Error{Status: status}
	where := c.BaseURL
	model := c.Model
	if model == "" {
		model = "the model"
	}
	switch {
	case status == http.StatusNotFound && (typ == "not_found_error" || lower == "file not found" || lower == "404 page not found" || msg == ""):
		e.Kind = oneshot.RouteMissing
		e.Line = fmt.Sprintf("the server at %s has no /v1/systemone route (404): it cannot serve decision models — llama-server b11361 or later, or Ollama 0.35 or later, can", where)
	case status == http.StatusNotFound:
		e.Kind = oneshot.ModelMissing
		e.Line = fmt.Sprintf("the server at %s does not have %s: %s (pull it, or fix model in the agent file)", where, model, msg)
	case status == http.StatusNotImplemented || typ == "not_supported_error" || strings.Contains(lower, "not a decision model") ||
		strings.Contains(lower, "decision") && (strings.Contains(lower, "support") || strings.Contains(lower, "capab")):
		e.Kind = oneshot.WrongModel
		e.Line = fmt.Sprintf("%s at %s is not a decision model (%s) — point the agent file at one, e.g. LiquidAI d1-3B", model, where, msg)
	case status == http.StatusTooManyRequests:
		e.Kind = oneshot.Busy
		e.Line = fmt.Sprintf("the decision server at %s is busy (429: %s)", where, msg)
	case status == http.StatusBadRequest || status == http.StatusUnprocessableEntity:
		e.Kind = oneshot.Invalid
		e.Line = fmt.Sprintf("the decision server refused the question (%d: %s)", status, msg)
	default:
		e.Kind = oneshot.ServerError
		e.Line = fmt.Sprintf("the decision server at %s answered %d: %s", where, status, msg)
	}
	return e
}
