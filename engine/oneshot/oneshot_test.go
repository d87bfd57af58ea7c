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

// The user's line of a failure: a classifier's own words when it is one,
// else the error's text; a server's words fold onto one line and stop at
// 160 characters.
func TestLineAndShort(t *testing.T) {
	wrapped := fmt.Errorf("routing: %w", &oneshot.Error{Kind: oneshot.Busy, Line: "the decision server is busy (429)"})
	if got := oneshot.Line(wrapped); got != "the decision server is busy (429)" {
		t.Errorf("Line(wrapped classifier error) = %q", got)
	}
	if got := oneshot.Line(errors.New("plain")); got != "plain" {
		t.Errorf("Line(plain error) = %q", got)
	}
	if got := oneshot.Short("  a\n\tb  c "); got != "a b c" {
		t.Errorf("Short folds whitespace: %q", got)
	}
	long := strings.Repeat("é", 200)
	if got := oneshot.Short(long); got != strings.Repeat("é", 160)+"…" {
		t.Errorf("Short(200 runes) = %d runes, want 160 and an ellipsis", len([]rune(got)))
	}
}

// A server that echoes the key in its answer does not hand it on, and an
// answer is read only up to the limit.
func TestPostRedactsAndBounds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":"bad key %s"}%s`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), strings.Repeat(" ", 4096))
	}))
	defer srv.Close()
	_, raw, err := oneshot.Post(context.Background(), oneshot.Request{URL: srv.URL, APIKey: "sk-secret", Limit: 64})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "sk-secret") || !strings.Contains(string(raw), "[redacted]") {
		t.Errorf("answer = %q: the key is not redacted", raw)
	}
	if len(raw) > 64+len("[redacted]") { // the limit is on what is read, before redaction
		t.Errorf("read %d bytes of a 4 KB answer past a 64-byte limit", len(raw))
	}
	_, _, err = oneshot.Post(context.Background(), oneshot.Request{URL: "http://bad host/", Name: "guard"})
	var e *oneshot.Error
	if !errors.As(err, &e) || e.Kind != oneshot.Unreachable || !strings.Contains(e.Line, `bad guard server URL "http://bad host/"`) {
		t.Errorf("a bad URL: %v", err)
	}
}
