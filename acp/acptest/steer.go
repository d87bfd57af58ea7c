package acptest

import (
	"context"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"
)

// Steering is the answer to a _session/steering request: Outcome is
// "injected", "startedNewTurn" or "promptRequired" (with Reason).
type Steering struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

// Steer sends text to session id as a correction while it works, as the
// leading ACP adapters' editors do (_session/steering, with meta as its
// _meta when not nil). A failed request fails the test.
func (e *Editor) Steer(ctx context.Context, id sdk.SessionId, text string, meta map[string]any) Steering {
	e.t.Helper()
	params := map[string]any{"sessionId": id, "prompt": []sdk.ContentBlock{sdk.TextBlock(text)}}
	if meta != nil {
		params["_meta"] = meta
	}
	raw, err := e.Conn.CallExtension(ctx, "_session/steering", params)
	if err != nil {
		e.t.Fatalf("_session/steering: %v", err)
	}
	var s Steering
	if err := json.Unmarshal(raw, &s); err != nil {
		e.t.Fatalf("_session/steering answered %s: %v", raw, err)
	}
	return s
}
