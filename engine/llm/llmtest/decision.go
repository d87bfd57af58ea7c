package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DecisionAnswer answers one POST /v1/systemone request (a decision
// model, whose wire format package engine/decide writes and reads), in
// order of arrival like Steps. A scenario without decisions serves no
// such route: llama-server's 404 "File Not Found", the answer of a server
// too old to have one.
type DecisionAnswer struct {
	// Answers is the "answers" object, keyed by question id, sent as JSON
	// with the request's model and a usage object.
	Answers map[string]any `yaml:"answers"`
	// Status and Body replace the answer: an error in one server's shape
	// (llama.cpp's 501 not_supported_error, Ollama's plain string…) or a
	// malformed body, sent as is.
	Status int    `yaml:"status"`
	Body   string `yaml:"body"`
	// Delay is waited before answering (a loading model, a slow CPU); the
	// handler returns early when the client goes away.
	Delay time.Duration `yaml:"delay"`
}

// DecisionRequest is one /v1/systemone request as received.
type DecisionRequest struct {
	Body      json.RawMessage
	Model     string
	State     json.RawMessage
	Questions map[string]json.RawMessage
}

// DecisionRequests returns the /v1/systemone requests received so far.
func (s *Server) DecisionRequests() []DecisionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]DecisionRequest(nil), s.decReqs...)
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	if len(s.sc.Decisions) == 0 {
		notFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req struct {
		Model     string                     `json:"model"`
		State     json.RawMessage            `json:"state"`
		Questions map[string]json.RawMessage `json:"questions"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, `{"error":{"code":400,"message":"fakellm: request body is not JSON","type":"invalid_request_error"}}`)
		return
	}
	s.mu.Lock()
	s.decReqs = append(s.decReqs, DecisionRequest{Body: body, Model: req.Model, State: req.State, Questions: req.Questions})
	i := s.nextDec
	if i >= len(s.sc.Decisions) && s.sc.Loop {
		i, s.nextDec = 0, 0
	}
	s.nextDec++
	s.mu.Unlock()
	if i >= len(s.sc.Decisions) {
		writeJSON(w, http.StatusInternalServerError, fmt.Sprintf(`{"error":{"code":500,"message":"fakellm: scenario exhausted: decision request %d arrived but the scenario has only %d decisions","type":"scenario_exhausted"}}`, i+1, len(s.sc.Decisions)))
		return
	}
	d := s.sc.Decisions[i]
	if d.Delay > 0 && !s.wait(r.Context(), d.Delay) {
		return
	}
	if d.Status != 0 || d.Body != "" {
		writeJSON(w, max(d.Status, 200), d.Body)
		return
	}
	model := req.Model
	if model == "" {
		model = s.modelIDs()[0]
	}
	writeJSON(w, 200, string(mustJSON(map[string]any{
		"model":   model,
		"answers": d.Answers,
		"usage":   map[string]int{"input_tokens": max(1, tokens(len(req.State))), "output_tokens": 0},
	})))
}

// notFound is llama-server's own answer to an unknown route.
func notFound(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusNotFound, `{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}`)
}
