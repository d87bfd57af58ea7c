package oneshot_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/oneshot"
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
	status, raw, fail := oneshot.Post(context.Background(), oneshot.Request{URL: srv.URL, APIKey: "k", Body: map[string]int{"a": 1}})
	if fail != nil || status != http.StatusTeapot || string(raw) != `{"error":"short and stout"}` {
		t.Errorf("answer: %d %q %+v", status, raw, fail)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, _, fail := oneshot.Post(ctx, oneshot.Request{URL: srv.URL + "/slow", APIKey: "k"}); fail == nil || fail.Kind != oneshot.Timeout {
		t.Errorf("slow server: %+v, want a timeout", fail)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if _, _, fail := oneshot.Post(cctx, oneshot.Request{URL: srv.URL}); fail == nil || fail.Kind != oneshot.Cancelled {
		t.Errorf("cancelled: %+v", fail)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	if _, _, fail := oneshot.Post(context.Background(), oneshot.Request{URL: dead}); fail == nil || fail.Kind != oneshot.Unreachable || fail.Cause != "connection refused" {
		t.Errorf("no server: %+v", fail)
	}
	if _, _, fail := oneshot.Post(context.Background(), oneshot.Request{URL: srv.URL, Body: func() {}}); fail == nil || fail.Kind != oneshot.Encode {
		t.Errorf("a body that is not JSON: %+v", fail)
	}
}
