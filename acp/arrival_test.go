package acp

import (
	"encoding/json"
	"testing"
)

// The reader stamps a prompt with its arrival and keeps the client's own
// _meta; anything it cannot stamp safely goes on as it came, for the SDK
// to answer.
func TestArrive(t *testing.T) {
	a := New(Options{})
	for _, tt := range []struct {
		in      string
		stamped bool
		keep    string // a _meta key of the client's that must survive
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`, true, ""},
		{`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[],"_meta":{"zed":1}}}`, true, "zed"},
		{`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[],"_meta":null}}`, true, ""},
		{`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"s","_meta":"x"}}`, false, ""},
		{`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":null}`, false, ""},
		{`{"jsonrpc":"2.0","id":6,"method":"session/prompt"}`, false, ""},
		{`{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"cwd":"/","prompt":"session/prompt"}}`, false, ""},
		{`{"jsonrpc":"2.0","id":8,"method":"session/cancel","params":{"sessionId":"s"}}`, false, ""},
	} {
		out := a.arrive([]byte(tt.in))
		var m struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal(out, &m)
		_, stamped := m.Params.Meta[metaArrival]
		if stamped != tt.stamped || !tt.stamped && string(out) != tt.in {
			t.Errorf("%s\n→ %s (stamped %v, want %v)", tt.in, out, stamped, tt.stamped)
		}
		if tt.keep != "" && m.Params.Meta[tt.keep] == nil {
			t.Errorf("%s lost the client's _meta: %s", tt.in, out)
		}
		if stamped {
			if n := arrivalOf(m.Params.Meta); n == 0 {
				t.Errorf("%s: no arrival read back", out)
			}
			if _, left := m.Params.Meta[metaArrival]; left {
				t.Errorf("arrivalOf left the stamp in _meta")
			}
		}
	}
}

// A session/cancel notification is handled by the reader alone: the SDK,
// given it, would cancel whichever prompt of the session runs when its
// handler gets to it — under load, a prompt sent after the cancel.
func TestCancelStopsAtTheReader(t *testing.T) {
	a := New(Options{})
	for _, in := range []string{
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"unknown"}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s","_meta":{}}}`,
	} {
		if out := a.arrive([]byte(in)); out != nil {
			t.Errorf("%s went on to the SDK as %s", in, out)
		}
	}
}
