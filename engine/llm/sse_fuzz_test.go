package llm

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readEvents(r io.Reader) ([]sseEvent, error) {
	s := newSSEReader(r)
	var evs []sseEvent
	for {
		ev, err := s.next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// FuzzSSEReader: on any body the reader never panics, ends with io.EOF,
// delivers no more events than the body has lines, a bare event is one
// JSON-looking line, and a body read a byte at a time gives the same
// events as read whole (servers and proxies split bodies anywhere).
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: {\"choices\":[]}\n\ndata: [DONE]\n\n",
		": ping\r\n\r\ndata: {\"a\":1}\r\ndata: {\"b\":2}\r\n\r\n",
		"event: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\n",
		"error: {\"message\":\"old llama.cpp\"}\n\ndata: [DONE]\n\n",
		"{\"model\":\"ollama\",\"done\":false}\n{\"done\":true}\n",
		"data: {\"a\":\ndata: 1}\n\n",
		"data: last event without its blank line",
		"id: 1\nretry: 10\nunknown: x\ndata:no space\n\n\n\n",
		"data: {\"x\":1}\n[1,2]\nerror: e\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		evs, err := readEvents(strings.NewReader(body))
		if !errors.Is(err, io.EOF) {
			t.Fatalf("ended with %v, want io.EOF", err)
		}
		if lines := strings.Count(body, "\n") + 1; len(evs) > lines {
			t.Fatalf("%d events from %d lines", len(evs), lines)
		}
		for _, ev := range evs {
			if ev.kind == evBare && (len(ev.data) == 0 || ev.data[0] != '{' && ev.data[0] != '[' || bytes.ContainsAny(ev.data, "\n")) {
				t.Fatalf("bare event %q", ev.data)
			}
		}
		evs2, err := readEvents(iotest.OneByteReader(strings.NewReader(body)))
		if !errors.Is(err, io.EOF) || len(evs2) != len(evs) {
			t.Fatalf("byte by byte: %d events (%v), whole: %d", len(evs2), err, len(evs))
		}
		for i := range evs {
			if evs[i].kind != evs2[i].kind || !bytes.Equal(evs[i].data, evs2[i].data) {
				t.Fatalf("event %d differs: %q vs %q", i, evs[i].data, evs2[i].data)
			}
		}
	})
}
