package oneshot_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/oneshot"
	"github.com/mm-agent/mm/internal/testenv"
)

// Each server's error shape gives its message (and type where it has one).
func TestServerMessage(t *testing.T) {
	for _, tt := range []struct{ raw, msg, typ string }{
		{`{"error":{"code":501,"message":"This model is not a decision model","type":"not_supported_error"}}`, "This model is not a decision model", "not_supported_error"},
		{`{"error":"model \"d1\" not found, try pulling it first"}`, `model "d1" not found, try pulling it first`, ""},
		{`{"object":"error","message":"The model does not exist.","type":"NotFoundError"}`, "The model does not exist.", ""},
		{"404 page not found\n", "404 page not found", ""},
		{`{"error":{"code":500}}`, `{"code":500}`, ""},
	} {
		msg, typ := oneshot.ServerMessage([]byte(tt.raw))
		if msg != tt.msg || typ != tt.typ {
			t.Errorf("%s: got %q %q, want %q %q", tt.raw, msg, typ, tt.msg, tt.typ)
		}
	}
}

// A timeout, a cancel and a server that is not there are told apart; an
// error status is an answer, with its body.
func TestPost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/slow" {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			return
		}
		w.WriteHeader(http.StatusTeapot)
		w.Write([]byte(`{"error":"short and stout"}`))
	}))
	defer srv.Close()
	status, raw, err := oneshot.Post(context.Background(), oneshot.Request{URL: srv.URL, APIKey: "k", Body: map[string]int{"a": 1}})
	if err != nil || status != http.StatusTeapot || string(raw) != `{"error":"short and stout"}` {
		t.Errorf("answer: %d %q %v", status, raw, err)
	}
	dead := testenv.RefusedURL(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		r    oneshot.Request
		kind oneshot.Kind
		line string
	}{
		{"slow server", context.Background(), oneshot.Request{URL: srv.URL + "/slow", APIKey: "k", Name: "guard", Server: srv.URL, Timeout: 50 * time.Millisecond}, oneshot.Timeout,
			"the guard model at " + srv.URL + " did not answer within 50ms"},
		{"cancelled", cancelled, oneshot.Request{URL: srv.URL}, oneshot.Cancelled, "cancelled"},
		{"no server", context.Background(), oneshot.Request{URL: dead + "/v1/systemone", Name: "decision", Server: dead + "/v1"}, oneshot.Unreachable,
			"no decision server answered at " + dead + "/v1 (connection refused) — start it"},
		{"a body that is not JSON", context.Background(), oneshot.Request{URL: srv.URL, Body: func() {}, Name: "decision"}, oneshot.Malformed, "the decision question cannot be written as JSON"},
	}
	for _, tt := range tests {
		_, _, err := oneshot.Post(tt.ctx, tt.r)
		var e *oneshot.Error
		if !errors.As(err, &e) || e.Kind != tt.kind || !strings.HasPrefix(e.Line, tt.line) {
			t.Errorf("%s: %v, want kind %d with %q", tt.name, err, tt.kind, tt.line)
		}
	}
	if !oneshot.IsCancelled(fmt.Errorf("routing: %w", &oneshot.Error{Kind: oneshot.Cancelled})) {
		t.Error("a wrapped cancel is not IsCancelled")
	}
}
