package risk

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/mm-agent/mm/engine/oneshot"
)

// statusError turns an error answer into its kind and one line.
func (c *Client) statusError(status int, raw []byte) error {
	msg, _ := oneshot.ServerMessage(raw)
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(lower, "not found") && strings.Contains(lower, "model"),
		strings.Contains(lower, "try pulling"):
		return &oneshot.Error{Kind: oneshot.ModelMissing, Status: status, Line: fmt.Sprintf("the guard server at %s does not have the model (%s) — fix model in the agent file, or pull it", c.BaseURL, msg)}
	case status == http.StatusNotFound:
		return &oneshot.Error{Kind: oneshot.RouteMissing, Status: status, Line: fmt.Sprintf("the server at %s has no chat-completions route (404 %s) — baseURL should end in /v1", c.BaseURL, msg)}
	}
	return &oneshot.Error{Kind: oneshot.ServerError, Status: status, Line: fmt.Sprintf("the guard server at %s answered %d: %s", c.BaseURL, status, msg)}
}
