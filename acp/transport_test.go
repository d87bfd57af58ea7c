package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mm-agent/mm/engine"
)

// filterRun runs the stdin filter over in and returns the lines passed to
// the SDK, the answers mm wrote itself, and the request ids forwarded.
func filterRun(t testing.TB, in io.Reader) (forwarded, answered []string, ids []string) {
	t.Helper()
	var sdkIn, out bytes.Buffer
	err := filter(in, &sdkIn, &out, slog.New(slog.DiscardHandler), func(id json.RawMessage, msg []byte) []byte {
		if id != nil {
			ids = append(ids, string(id))
		}
		return msg
	})
	if err != nil {
		t.Fatalf("filter: %v", err)
	}
	split := func(b *bytes.Buffer) []string {
		s := strings.TrimSuffix(b.String(), "\n")
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
	return split(&sdkIn), split(&out), ids
}

// TestFilter: well-formed messages pass, one per line, with the ids of
// requests counted; malformed lines get the JSON-RPC error a client can
// match; an oversized line is answered without being buffered whole.
func TestFilter(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":9,"method":"session/prompt","params":{"text":"` + strings.Repeat("y", MaxMessage) + `"}}`
	// The id last, a decoy "id" inside params, escaped quotes in the text.
	late := `{"jsonrpc":"2.0","method":"session/prompt","params":{"id":7,"text":"` + strings.Repeat(`y\"}{`, MaxMessage/5) + `"}, "id" : "late"}`
	noID := `{"jsonrpc":"2.0","method":"session/cancel","params":{"id":7,"text":"` + strings.Repeat("y", MaxMessage) + `"}}`
	tests := []struct {
		name      string
		in        string
		forwarded int
		ids       []string
		codes     []int // of the answers mm wrote itself, in order
		answerIDs []string
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n", 1, []string{"1"}, nil, nil},
		{"string id, spaced", `{"jsonrpc":"2.0", "id" : "a b", "method":"x"}` + "\n", 1, []string{`"a b"`}, nil, nil},
		{"notification", `{"jsonrpc":"2.0","method":"session/cancel","params":{}}` + "\n", 1, nil, nil, nil},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"x"}` + "\n", 0, nil, []int{-32600}, []string{"null"}},
		{"response", `{"jsonrpc":"2.0","id":4,"result":{}}` + "\n", 1, nil, nil, nil},
		{"no final newline", `{"jsonrpc":"2.0","id":2,"method":"x"}`, 1, []string{"2"}, nil, nil},
		{"blank lines and CRLF", "\r\n\n" + `{"jsonrpc":"2.0","id":3,"method":"x"}` + "\r\n", 1, []string{"3"}, nil, nil},
		{"garbage", "not json\n", 0, nil, []int{-32700}, []string{"null"}},
		{"batch", "[1,2]\n", 0, nil, []int{-32600}, []string{"null"}},
		{"no method", `{"jsonrpc":"2.0","id":5}` + "\n", 0, nil, []int{-32600}, []string{"5"}},
		{"neither", `{"jsonrpc":"2.0"}` + "\n", 0, nil, []int{-32600}, []string{"null"}},
		{"oversized then ok", big + "\n" + `{"jsonrpc":"2.0","id":6,"method":"x"}` + "\n", 1, []string{"6"}, []int{-32600}, []string{"9"}},
		{"oversized, id last", late + "\n", 0, nil, []int{-32600}, []string{`"late"`}},
		{"oversized notification", noID + "\n", 0, nil, []int{-32600}, []string{"null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fwd, ans, ids := filterRun(t, strings.NewReader(tt.in))
			if len(fwd) != tt.forwarded {
				t.Errorf("forwarded %d lines, want %d: %q", len(fwd), tt.forwarded, fwd)
			}
			if strings.Join(ids, ",") != strings.Join(tt.ids, ",") {
				t.Errorf("request ids %v, want %v", ids, tt.ids)
			}
			if len(ans) != len(tt.codes) {
				t.Fatalf("answers %q, want codes %v", ans, tt.codes)
			}
			for i, a := range ans {
				var m struct {
					ID    json.RawMessage `json:"id"`
					Error struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(a), &m); err != nil {
					t.Fatalf("answer %q is not JSON", a)
				}
				if m.Error.Code != tt.codes[i] || string(m.ID) != tt.answerIDs[i] || m.Error.Message == "" {
					t.Errorf("answer %s, want code %d id %s", a, tt.codes[i], tt.answerIDs[i])
				}
			}
		})
	}
}

// TestServeAnswersBeforeEOF: a request followed at once by EOF is
// answered, then Serve returns (cmd/mm's TestACPAnswersRequestBeforeEOF
// checks the same through the binary).
func TestServeAnswersBeforeEOF(t *testing.T) {
	a := New(Options{Name: "mm", Version: "test"})
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"session/list","params":{}}` + "\n"
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- Serve(context.Background(), a, strings.NewReader(in), &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after EOF")
	}
	got := out.String()
	for _, id := range []string{`"id":1,"result"`, `"id":2,"result"`} {
		if !strings.Contains(got, id) {
			t.Errorf("no answer %s before the end; stdout:\n%s", id, got)
		}
	}
}

type lockedBuffer struct {
	lockedWriter
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// FuzzFilter: whatever arrives on stdin, the filter never panics, passes
// the SDK only single-line JSON objects, answers everything else with
// JSON-RPC errors, counts exactly the requests among what it passed, and
// decides the same whether the input comes whole or a byte at a time.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n",
		`{"jsonrpc":"2.0","method":"session/cancel"}` + "\r\n" + `{"jsonrpc":"2.0","id":"x","result":null}`,
		"garbage\n[1]\n{}\n" + `{"id":null,"method":"m"}` + "\n",
		`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}` + "\n\n\n",
		"\xff\xfe{\"id\":1}\n",
		`{"id":1,"method":"x","id":2}` + "\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fwd, ans, ids := filterRun(t, strings.NewReader(in))
		requests := 0
		for _, l := range fwd {
			if !json.Valid([]byte(l)) || l == "" || l[0] != '{' || strings.ContainsAny(l, "\n") {
				t.Fatalf("passed to the SDK: %q", l)
			}
			if id, code, _ := check([]byte(l)); code != 0 {
				t.Fatalf("passed a line check refuses: %q", l)
			} else if id != nil {
				requests++
			}
		}
		if requests != len(ids) {
			t.Fatalf("%d requests passed, %d counted", requests, len(ids))
		}
		for _, a := range ans {
			var m struct {
				Error *struct{ Code int } `json:"error"`
			}
			if json.Unmarshal([]byte(a), &m) != nil || m.Error == nil || m.Error.Code == 0 {
				t.Fatalf("answer %q is not a JSON-RPC error", a)
			}
		}
		fwd2, ans2, ids2 := filterRun(t, iotest.OneByteReader(strings.NewReader(in)))
		if strings.Join(fwd, "\n") != strings.Join(fwd2, "\n") || len(ans) != len(ans2) || len(ids) != len(ids2) {
			t.Fatalf("byte by byte differs:\n%q %q\n%q %q", fwd, ans, fwd2, ans2)
		}
	})
}

// An answer is recognised by its parsed fields, whatever their order: a
// change of the SDK's field order must not leave the drain waiting for
// answers it already wrote, nor drop the / menu.
func TestAnswersRecognisedWhateverTheFieldOrder(t *testing.T) {
	var got []string
	w := &lockedWriter{w: io.Discard, answered: func(id json.RawMessage, _ []byte) { got = append(got, string(id)) }}
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"result":{"sessionId":"s"},"id":"two","jsonrpc":"2.0"}`,
		`{"error":{"code":-32603,"message":"x"},"jsonrpc":"2.0","id": 3}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"id":"not an answer"}}`,
		`{"jsonrpc":"2.0","id":9,"method":"session/request_permission","params":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
	} {
		w.Write([]byte(line + "\n"))
	}
	if want := []string{`1`, `"two"`, `3`}; !slices.Equal(got, want) {
		t.Fatalf("answers seen = %v, want %v", got, want)
	}
}

// Once closeAll began, a turn does not start: its wait-group count would
// race closeAll's Wait.
func TestNoTurnStartsOnceClosing(t *testing.T) {
	a := New(Options{})
	a.closeAll()
	s := &session{agent: a} // no engine: running it would panic
	if end := s.run(context.Background(), "hi", nil); end.Reason != engine.Cancelled {
		t.Fatalf("turn end = %+v, want cancelled", end)
	}
}

// Lines read together are all seen by the reader before any goes on to
// the SDK: a cancel written right behind its prompt marks the prompt
// before the SDK can start it.
func TestFilterSeesAWriteBeforePassingItOn(t *testing.T) {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}` + "\n")
	var events []string
	sdkIn := writerFunc(func(p []byte) (int, error) {
		events = append(events, "passed on")
		return len(p), nil
	})
	err := filter(in, sdkIn, io.Discard, slog.New(slog.DiscardHandler), func(id json.RawMessage, msg []byte) []byte {
		events = append(events, "seen")
		return msg
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"seen", "seen", "passed on", "passed on"}; !slices.Equal(events, want) {
		t.Errorf("order %v, want %v", events, want)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
