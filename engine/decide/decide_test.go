package decide_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/oneshot"
)

var skillOpts = decide.Options{{"release-notes", "write release notes from the git log"}, {"run-tests", "run the test suite"}}

func server(t *testing.T, ds ...llmtest.DecisionAnswer) *llmtest.Server {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Scenario{Decisions: ds})
	t.Cleanup(srv.Close)
	return srv
}

func choice(name string, p, conf float64) llmtest.DecisionAnswer {
	other := "none"
	if name == "none" {
		other = "run-tests"
	}
	return llmtest.DecisionAnswer{Answers: map[string]any{"route": map[string]any{"type": "choice", "choice": name,
		"probabilities": map[string]any{name: p, other: 1 - p}, "confidence": conf}}}
}

func TestRoute(t *testing.T) {
	srv := server(t, choice("release-notes", 0.9, 0.85), choice("run-tests", 0.9, 0.55), choice("none", 0.97, 0.95))
	c := &decide.Client{BaseURL: srv.URL(), Model: "d1-3b"}
	ctx := context.Background()
	for _, want := range []decide.Routed{{"release-notes", 0.85}, {"run-tests", 0.55}, {"none", 0.95}} {
		got, err := c.Route(ctx, "please write the release notes for 1.4", "Which skill applies?", skillOpts)
		if err != nil {
			t.Fatal(err)
		}
		if got.Choice != want.Choice || abs(got.Sure-want.Sure) > 1e-9 {
			t.Errorf("Route = %+v, want %+v", got, want)
		}
	}
	req := srv.DecisionRequests()[0]
	if req.Model != "d1-3b" || string(req.State) != `"please write the release notes for 1.4"` {
		t.Errorf("request: %s", req.Body)
	}
	// The options in order, none last, descriptions as criteria.
	want := `{"type":"choice","instructions":"Which skill applies?","criteria":{"release-notes":"write release notes from the git log","run-tests":"run the test suite","none":"none of the above applies"}}`
	if got := string(req.Questions["route"]); got != want {
		t.Errorf("question:\n got %s\nwant %s", got, want)
	}
	// Byte-identical requests for the same input.
	if a, b := srv.DecisionRequests()[0].Body, srv.DecisionRequests()[2].Body; string(a) != string(b) {
		t.Errorf("the same question was written twice differently:\n%s\n%s", a, b)
	}
}

func TestSureIsTheCarefulReading(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		a    decide.Answer
		want float64
	}{
		{decide.Answer{Type: "choice", Choice: "a", Probabilities: map[string]float64{"a": 0.9, "b": 0.1}, Confidence: f(0.8)}, 0.8},
		{decide.Answer{Type: "choice", Choice: "a", Probabilities: map[string]float64{"a": 0.7, "b": 0.3}, Confidence: f(0.9)}, 0.7},
		{decide.Answer{Type: "choice", Choice: "a", Probabilities: map[string]float64{"a": 0.6, "b": 0.4}}, 0.6},
		{decide.Answer{Type: "noul", Noul: f(0.03)}, 0.03},
		{decide.Answer{Type: "score", Score: f(1.2), Probabilities: map[string]float64{"0": 0.1, "1": 0.6, "2": 0.3}, Confidence: f(0.4)}, 0.4},
		{decide.Answer{Type: "score", Score: f(1.2), Probabilities: map[string]float64{"0": 0.1, "1": 0.6, "2": 0.3}}, 0.6},
	}
	for _, tt := range tests {
		if got := tt.a.Sure(); abs(got-tt.want) > 1e-9 {
			t.Errorf("%+v: Sure = %v, want %v", tt.a, got, tt.want)
		}
	}
}

// TestErrors: each server's failure is one line of the right kind.
func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		d    *llmtest.DecisionAnswer // nil: the route does not exist
		kind oneshot.Kind
		line string
	}{
		{"route missing (llama.cpp too old)", nil, oneshot.RouteMissing, "has no /v1/systemone route"},
		{"llama.cpp: a chat model", &llmtest.DecisionAnswer{Status: 501, Body: `{"error":{"code":501,"message":"This model is not a decision model","type":"not_supported_error"}}`}, oneshot.WrongModel, "is not a decision model"},
		{"ollama: a chat model", &llmtest.DecisionAnswer{Status: 400, Body: `{"error":"model \"qwen3:4b\" does not support decisions"}`}, oneshot.WrongModel, "is not a decision model"},
		{"ollama: not pulled", &llmtest.DecisionAnswer{Status: 404, Body: `{"error":"model \"d1-3b\" not found, try pulling it first"}`}, oneshot.ModelMissing, `not found, try pulling it first`},
		{"llama.cpp: too many options", &llmtest.DecisionAnswer{Status: 422, Body: `{"error":{"code":422,"message":"criteria has 300 options, at most 255 are supported","type":"invalid_request_error"}}`}, oneshot.Invalid, "at most 255"},
		{"queue full", &llmtest.DecisionAnswer{Status: 429, Body: `{"error":{"code":429,"message":"queue is full","type":"unavailable_error"}}`}, oneshot.Busy, "busy"},
		{"not JSON", &llmtest.DecisionAnswer{Body: `<html>hello</html>`}, oneshot.Malformed, "not a systemone answer"},
		{"missing answer id", &llmtest.DecisionAnswer{Answers: map[string]any{"other": map[string]any{"type": "choice", "choice": "none", "probabilities": map[string]any{"none": 1.0}}}}, oneshot.Malformed, `no answer for question "route"`},
		{"probabilities sum to 1.7", &llmtest.DecisionAnswer{Answers: map[string]any{"route": map[string]any{"type": "choice", "choice": "run-tests", "probabilities": map[string]any{"run-tests": 0.9, "none": 0.8}}}}, oneshot.Malformed, "sum to 1.70"},
		{"choice not offered", &llmtest.DecisionAnswer{Answers: map[string]any{"route": map[string]any{"type": "choice", "choice": "deploy", "probabilities": map[string]any{"deploy": 1.0}}}}, oneshot.Malformed, `"deploy", which was not an option`},
		{"wrong type", &llmtest.DecisionAnswer{Answers: map[string]any{"route": map[string]any{"type": "noul", "noul": 0.5}}}, oneshot.Malformed, "as a noul"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srv *llmtest.Server
			if tt.d == nil {
				srv = server(t)
			} else {
				srv = server(t, *tt.d)
			}
			c := &decide.Client{BaseURL: srv.URL(), Model: "d1-3b"}
			_, err := c.Route(context.Background(), "hi", "Which skill applies?", skillOpts)
			var de *oneshot.Error
			if !errors.As(err, &de) || de.Kind != tt.kind || !strings.Contains(de.Line, tt.line) || strings.Contains(de.Line, "\n") {
				t.Errorf("err = %v (%+v), want kind %d with %q", err, de, tt.kind, tt.line)
			}
		})
	}
}

// TestRoundingAccepted: probabilities a little under one are rounding.
func TestRoundingAccepted(t *testing.T) {
	srv := server(t, llmtest.DecisionAnswer{Answers: map[string]any{"route": map[string]any{"type": "choice", "choice": "run-tests", "probabilities": map[string]any{"run-tests": 0.66, "release-notes": 0.2, "none": 0.12}, "confidence": 0.49}}})
	c := &decide.Client{BaseURL: srv.URL()}
	got, err := c.Route(context.Background(), "run the tests", "?", skillOpts)
	if err != nil || got.Choice != "run-tests" {
		t.Errorf("Route = %+v, %v", got, err)
	}
	if body := string(srv.DecisionRequests()[0].Body); strings.Contains(body, `"model"`) {
		t.Errorf("no model configured, yet one was sent: %s", body)
	}
}

// TestTimeout: a model still loading does not hold the caller past the
// timeout; the error says so.
func TestTimeout(t *testing.T) {
	srv := server(t, llmtest.DecisionAnswer{Delay: time.Minute})
	c := &decide.Client{BaseURL: srv.URL(), Timeout: 100 * time.Millisecond}
	done := make(chan error, 1)
	go func() {
		_, err := c.Route(context.Background(), "hi", "?", skillOpts)
		done <- err
	}()
	select {
	case err := <-done:
		var de *oneshot.Error
		if !errors.As(err, &de) || de.Kind != oneshot.Timeout || !strings.Contains(de.Line, "within 100ms") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Route waited for the server past its timeout")
	}
}

func TestUnreachable(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{})
	url := srv.URL()
	srv.Close()
	_, err := (&decide.Client{BaseURL: url}).Route(context.Background(), "hi", "?", skillOpts)
	var de *oneshot.Error
	if !errors.As(err, &de) || de.Kind != oneshot.Unreachable || !strings.Contains(de.Line, "no decision server answered at "+url) {
		t.Errorf("err = %v", err)
	}
}

func TestRelevant(t *testing.T) {
	srv := server(t, llmtest.DecisionAnswer{Answers: map[string]any{
		"shell": map[string]any{"type": "noul", "noul": 0.9},
		"web":   map[string]any{"type": "noul", "noul": 0.05},
	}})
	c := &decide.Client{BaseURL: srv.URL()}
	got, err := c.Relevant(context.Background(), "run the tests", decide.Options{{"shell", "running commands"}, {"web", "fetching web pages"}})
	if err != nil || got["shell"] != 0.9 || got["web"] != 0.05 {
		t.Errorf("Relevant = %v, %v", got, err)
	}
	var q map[string]any
	json.Unmarshal(srv.DecisionRequests()[0].Questions["web"], &q)
	if q["type"] != "noul" || !strings.Contains(q["instructions"].(string), "fetching web pages") {
		t.Errorf("question: %v", q)
	}
}

func TestEndpoint(t *testing.T) {
	for base, want := range map[string]string{
		"http://h:8080/v1":  "http://h:8080/v1/systemone",
		"http://h:8080/v1/": "http://h:8080/v1/systemone",
		"http://h:8080":     "http://h:8080/v1/systemone",
	} {
		if got := (&decide.Client{BaseURL: base}).Endpoint(); got != want {
			t.Errorf("%s: %s", base, got)
		}
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
