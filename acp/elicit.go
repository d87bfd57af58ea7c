package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"
)

// A question that is not a tool's permission — trusting the workspace's
// own config — is asked as a form (elicitation/create, unstable in ACP)
// when the client advertised clientCapabilities.elicitation.form. The
// SDK's request type (v0.13.5) has no sessionId, which the protocol's
// schema requires of a form (it is tied to a session or to a request),
// so mm writes this request itself and takes its answer out of the input
// before the SDK sees it.

// ErrNoForm says the editor shows no forms: ask another way.
var ErrNoForm = errors.New("the editor does not show forms (elicitation)")

// Confirmation is a yes/no question asked as a form.
type Confirmation struct {
	// Message is what the user reads before answering: what the answer
	// changes, in full.
	Message string
	// Field labels the one checkbox the user ticks to say yes; a form
	// sent back without it ticked, declined or cancelled says no.
	Field string
}

// Confirmer is the environment of a session whose editor may show forms.
type Confirmer interface {
	// Confirm asks q and reports whether the user said yes. ErrNoForm: the
	// editor shows no forms (ask another way); any other error: no answer.
	Confirm(ctx context.Context, q Confirmation) (bool, error)
}

// Confirm implements Confirmer through elicitation/create.
func (e *editorEnv) Confirm(ctx context.Context, q Confirmation) (bool, error) {
	a := e.s.agent
	a.mu.Lock()
	form := a.client.Elicitation != nil && a.client.Elicitation.Form != nil
	a.mu.Unlock()
	if !form {
		return false, ErrNoForm
	}
	const field = "confirm"
	res, err := a.request(ctx, sdk.ClientMethodElicitationCreate, map[string]any{
		"sessionId": e.s.id,
		"mode":      "form",
		"message":   q.Message,
		"requestedSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				field: map[string]any{"type": "boolean", "title": q.Field, "default": false},
			},
			"required": []string{field},
		},
	})
	if err != nil {
		return false, err
	}
	var answer struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(res, &answer); err != nil {
		return false, fmt.Errorf("the editor's answer to the form: %w", err)
	}
	yes, _ := answer.Content[field].(bool)
	return answer.Action == "accept" && yes, nil
}

// ownPrefix starts the id of every request mm writes itself: the SDK's
// own requests have numbers, so the two never meet.
const ownPrefix = "mm-"

// ownRequests are the requests mm wrote itself, waiting for their answer.
type ownRequests struct {
	mu      sync.Mutex
	next    uint64
	waiting map[string]chan ownAnswer // id → its answer
}

type ownAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// request writes a JSON-RPC request of mm's own and waits for its
// answer, ctx's end, or the end of the input (no answer can come then).
// A request left unanswered is cancelled ($/cancel_request), so the
// editor can close its form.
func (a *Agent) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	o := &a.own
	o.mu.Lock()
	o.next++
	id := ownPrefix + strconv.FormatUint(o.next, 10)
	if o.waiting == nil {
		o.waiting = map[string]chan ownAnswer{}
	}
	ch := make(chan ownAnswer, 1)
	o.waiting[id] = ch
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		delete(o.waiting, id)
		o.mu.Unlock()
	}()
	if err := a.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case ans := <-ch:
		if ans.Error != nil {
			if ans.Error.Code == -32601 { // method not found: it does not show them after all
				return nil, fmt.Errorf("%w: %s", ErrNoForm, ans.Error.Message)
			}
			return nil, fmt.Errorf("the editor answered %s with an error: %s", method, ans.Error.Message)
		}
		return ans.Result, nil
	case <-ctx.Done():
		a.send(map[string]any{"method": "$/cancel_request", "params": map[string]any{"requestId": id}})
		return nil, ctx.Err()
	case <-a.eof:
		return nil, errors.New("the editor closed the connection before answering")
	}
}

// takeAnswer hands msg to the request of mm's own it answers, and reports
// whether it was one (then the SDK must not see it).
func (a *Agent) takeAnswer(msg []byte) bool {
	if !bytes.Contains(msg, []byte(ownPrefix)) {
		return false
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		ownAnswer
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "" {
		return false
	}
	var id string
	if json.Unmarshal(m.ID, &id) != nil || !strings.HasPrefix(id, ownPrefix) {
		return false
	}
	a.own.mu.Lock()
	ch, ok := a.own.waiting[id]
	delete(a.own.waiting, id)
	a.own.mu.Unlock()
	if ok {
		ch <- m.ownAnswer
	}
	return true // an answer mm no longer waits for is dropped all the same
}
