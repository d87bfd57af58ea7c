package llm

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestSSEReader(t *testing.T) {
	big := strings.Repeat("x", 200<<10) // longer than the reader's buffer
	for _, tc := range []struct {
		name, in string
		want     []string // "kind:data"
	}{
		{"plain events", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`data:{"a":1}`, "data:[DONE]"}},
		{"comments and unknown fields", ": ping\nid: 7\nretry: 10\nfoo: bar\ndata: {}\n\n", []string{"data:{}"}},
		{"CRLF", "data: {}\r\n\r\n", []string{"data:{}"}},
		{"no space after colon", "data:{}\n\n", []string{"data:{}"}},
		{"multi-line data is joined", "data: {\"a\":\ndata: 1}\n\n", []string{"data:{\"a\":\n1}"}},
		{"complete JSON lines without a blank line", "data: {\"a\":1}\ndata: {\"b\":2}\n\n", []string{`data:{"a":1}`, `data:{"b":2}`}},
		{"event: error", "event: error\ndata: {\"message\":\"x\"}\n\ndata: {}\n\n", []string{`error:{"message":"x"}`, "data:{}"}},
		{"error: line", "error: {\"code\":500}\n\n", []string{`error:{"code":500}`}},
		{"error: line while data pending", "data: {}\nerror: {\"code\":500}\n", []string{"data:{}", `error:{"code":500}`}},
		{"bare JSON line", "data: {}\n\n{\"error\":\"boom\"}\n", []string{"data:{}", `bare:{"error":"boom"}`}},
		{"bare JSON line while data pending", "data: {}\n{\"error\":\"boom\"}\n", []string{"data:{}", `bare:{"error":"boom"}`}},
		{"last event without blank line", "data: {}", []string{"data:{}"}},
		{"long line", "data: \"" + big + "\"\n\n", []string{"data:\"" + big + "\""}},
		{"empty body", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newSSEReader(strings.NewReader(tc.in))
			var got []string
			for {
				ev, err := r.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				kind := map[eventKind]string{evData: "data", evError: "error", evBare: "bare"}[ev.kind]
				got = append(got, kind+":"+string(ev.data))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestStreamErrorFrom(t *testing.T) {
	for _, tc := range []struct{ in, msg, typ, code string }{
		{`{"error":{"code":500,"message":"boom","type":"server_error"}}`, "boom", "server_error", "500"},
		{`{"error":"boom"}`, "boom", "", ""},
		{`{"object":"error","message":"boom","type":"BadRequestError","code":400}`, "boom", "BadRequestError", "400"},
		{`{"message":"boom","code":500}`, "boom", "", "500"},
		{`not json at all`, "not json at all", "", ""},
	} {
		se := streamErrorFrom([]byte(tc.in))
		if se.Message != tc.msg || se.Type != tc.typ || se.Code != tc.code {
			t.Errorf("streamErrorFrom(%s) = %+v", tc.in, se)
		}
	}
}
