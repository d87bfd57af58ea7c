package acp

import (
	"bytes"
	"encoding/json"

	sdk "github.com/coder/acp-go-sdk"
)

// metaArrival is the _meta key under which the stdin reader stamps each
// session/prompt with its place in the input: the SDK runs requests in
// goroutines of their own and notifications in another, so the order in
// which a prompt and a session/cancel reach their handlers is not the
// order the client sent them. The stamp restores it: without it, a cancel
// sent right after a prompt would be lost when its handler ran before the
// prompt's had registered.
const metaArrival = "mm.arrival"

// arrive is called by the stdin reader for every message it passes on, in
// input order, and returns what the SDK is given (nil: nothing). A
// session/prompt is numbered and stamped; a session/cancel marks, at once,
// every prompt of its session read so far as cancelled — the one running
// and one whose handler has not begun yet alike — and goes no further:
// the SDK, handling it later on a goroutine of its own, would cancel
// whichever prompt of the session is running by then, a prompt sent after
// the cancel included (the SDK keeps one cancel per session).
func (a *Agent) arrive(msg []byte) []byte {
	if caps, ok := readSessionCaps(msg); ok {
		a.mu.Lock()
		a.caps = caps
		a.mu.Unlock()
		return msg
	}
	prompt := bytes.Contains(msg, []byte(`"`+sdk.AgentMethodSessionPrompt+`"`))
	cancel := bytes.Contains(msg, []byte(`"`+sdk.AgentMethodSessionCancel+`"`))
	if !prompt && !cancel {
		return msg
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return msg
	}
	var method string
	json.Unmarshal(m["method"], &method)
	var params map[string]json.RawMessage
	if json.Unmarshal(m["params"], &params) != nil || params == nil {
		return msg // the SDK answers what is wrong with it
	}
	var sid sdk.SessionId
	json.Unmarshal(params["sessionId"], &sid)
	switch method {
	case sdk.AgentMethodSessionCancel:
		if _, isRequest := m["id"]; isRequest {
			return msg // not a notification: the SDK answers it
		}
		s := a.session(sid)
		running := s != nil && s.cancelUpTo(a.arrivals.Load())
		if c := a.child(sid); c != nil {
			running = c.cancel() // a subagent's work alone
		}
		a.log.Info("cancel", "session", sid, "running", running)
		return nil
	case sdk.AgentMethodSessionPrompt:
		var meta map[string]any
		if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
			return msg // not an object: the SDK refuses it
		}
		if meta == nil {
			meta = map[string]any{}
		}
		n := a.arrivals.Add(1)
		meta[metaArrival] = n
		if s := a.session(sid); s != nil {
			s.expect(n) // steering read from now on goes to this prompt
		}
		params["_meta"], _ = json.Marshal(meta)
		m["params"], _ = json.Marshal(params)
		out, err := json.Marshal(m)
		if err != nil {
			return msg
		}
		return out
	}
	return msg
}

// arrivalOf takes the reader's stamp out of a prompt's _meta; 0 when the
// prompt did not come through the reader (then it is ordered as it
// begins, as before).
func arrivalOf(meta map[string]any) uint64 {
	v, ok := meta[metaArrival]
	if !ok {
		return 0
	}
	delete(meta, metaArrival)
	if f, ok := v.(float64); ok && f > 0 {
		return uint64(f)
	}
	return 0
}
