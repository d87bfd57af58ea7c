package acp

import (
	"bytes"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine"
)

// Steering, as the leading adapters speak it (claude-agent-acp 0.101,
// codex-acp 2.6): initialize advertises `_meta.steering.supported`; the
// client sends `_session/steering` with `sessionId`, `prompt` (content
// blocks) and optionally `_meta.steering.idleBehavior:
// "promptRequired"`. The answer's `outcome` is "injected" (the running
// turn reads it before its next model call), "startedNewTurn" (nothing
// ran: a turn was started with it, whose updates stream as a prompt's
// do and whose end answers nothing), or, when the client opted in,
// "promptRequired" with `reason: "noRunningTurn"` (nothing ran and
// nothing was started: the client sends it as session/prompt). Like the
// adapters, mm does not echo a steering message as a live update — the
// client shows what it sent — and session/load replays it as the user's
// message in its place.
//
// A steering request is answered by the stdin reader, in input order:
// "a turn runs" means a prompt read before it has not ended, even when
// its handler has not begun yet (the SDK runs requests concurrently), so
// a correction sent right behind its prompt is never taken for one sent
// to an idle session.

// methodSteering is the steering request's method.
const methodSteering = "_session/steering"

// The outcomes of a steering request.
const (
	steerInjected       = "injected"
	steerStartedNewTurn = "startedNewTurn"
	steerPromptRequired = "promptRequired"
)

// steeringMeta is initialize's answer's _meta: steering is served.
func steeringMeta() map[string]any {
	return map[string]any{"steering": map[string]any{"supported": true}}
}

// steerCall reports whether msg is a steering request, and if so decides
// it now, in input order, and answers it on a goroutine of the agent's
// (joined by closeAll) so the reader goes on reading while the editor
// reads the answer.
func (a *Agent) steerCall(id json.RawMessage, msg []byte) bool {
	if !bytes.Contains(msg, []byte(`"`+methodSteering+`"`)) {
		return false
	}
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != methodSteering {
		return false
	}
	if id == nil {
		return true // a notification cannot be answered: there is nothing to decide
	}
	result, err := a.steer(m.Params)
	// Once the connection is closing, nothing is answered.
	a.spawn("steering answer", func() {
		answer := map[string]any{"id": id, "result": result}
		if err != nil {
			answer = map[string]any{"id": id, "error": err}
		}
		if err := a.send(answer); err != nil {
			a.log.Debug("steering answer not delivered", "err", err)
		}
	})
	return true
}

// steer decides one steering request: the outcome, or the error to
// answer.
func (a *Agent) steer(raw json.RawMessage) (map[string]any, *sdk.RequestError) {
	var p struct {
		SessionID sdk.SessionId      `json:"sessionId"`
		Prompt    []sdk.ContentBlock `json:"prompt"`
		Meta      *struct {
			Steering *struct {
				IdleBehavior *string `json:"idleBehavior"`
			} `json:"steering"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("steering params: " + err.Error())
	}
	if p.SessionID == "" {
		return nil, invalidParams("steering params require a sessionId")
	}
	if len(p.Prompt) == 0 {
		return nil, invalidParams("steering params require a non-empty prompt")
	}
	promptRequired := false
	if p.Meta != nil && p.Meta.Steering != nil && p.Meta.Steering.IdleBehavior != nil {
		if *p.Meta.Steering.IdleBehavior != steerPromptRequired {
			return nil, invalidParams("unsupported steering idleBehavior " + *p.Meta.Steering.IdleBehavior + ` — mm takes "promptRequired" or none`)
		}
		promptRequired = true
	}
	if err := checkBlocks(p.Prompt); err != nil {
		return nil, err
	}
	s := a.session(p.SessionID)
	if s == nil {
		return nil, invalidParams("unknown session " + string(p.SessionID))
	}
	if s.steerRunning(promptText(p.Prompt, s.env.Roots())) {
		a.log.Info("steering injected", "session", p.SessionID)
		return map[string]any{"outcome": steerInjected}, nil
	}
	if promptRequired {
		return map[string]any{"outcome": steerPromptRequired, "reason": "noRunningTurn"}, nil
	}
	a.startTurn(s, p.Prompt)
	return map[string]any{"outcome": steerStartedNewTurn}, nil
}

// startTurn runs a prompt no request waits for (a steering request to an
// idle session): numbered as the reader numbers prompts, so a
// session/cancel read after it cancels it, and a steering request read
// after it steers it.
func (a *Agent) startTurn(s *session, prompt []sdk.ContentBlock) {
	n := a.arrivals.Add(1)
	s.expect(n)
	if !a.spawn("steered turn", func() {
		resp, err := a.Prompt(a.stop, sdk.PromptRequest{SessionId: s.id, Prompt: prompt, Meta: map[string]any{metaArrival: float64(n)}})
		a.log.Info("steered turn ended", "session", s.id, "stopReason", resp.StopReason, "err", err)
	}) {
		s.forget(n, s.inbox(n))
	}
}

// expect makes the inbox of the prompt read at arrival: from now on,
// steering goes to it.
func (s *session) expect(arrival uint64) {
	in := &engine.Inbox{}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inboxes == nil {
		s.inboxes = map[uint64]*engine.Inbox{}
	}
	s.inboxes[arrival] = in
	s.latest = in
}

// inbox is the inbox of the prompt read at arrival, or a new one (a
// prompt that did not come through the reader), which steering goes to.
func (s *session) inbox(arrival uint64) *engine.Inbox {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in, ok := s.inboxes[arrival]; ok && arrival != 0 {
		return in
	}
	in := &engine.Inbox{}
	s.latest = in
	return in
}

// forget closes a prompt's inbox once the prompt returned: what it still
// held was for a turn that is over (cancelled, or never begun).
func (s *session) forget(arrival uint64, in *engine.Inbox) {
	if left := in.Close(); len(left) > 0 {
		s.agent.log.Info("steering not delivered: the turn ended", "session", s.id, "messages", len(left))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inboxes, arrival)
	if s.latest == in {
		s.latest = nil
	}
}

// steerRunning gives text to the session's newest turn; false when none
// runs (or it has decided to end).
func (s *session) steerRunning(text string) bool {
	s.mu.Lock()
	in := s.latest
	s.mu.Unlock()
	return in.Put(text)
}

// invalidParams is a -32602 whose message is the line itself.
func invalidParams(line string) *sdk.RequestError {
	return &sdk.RequestError{Code: -32602, Message: line, Data: map[string]any{"error": line}}
}
