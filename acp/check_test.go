package acp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestCheck: what the SDK would leave unanswered is answered by the
// filter, with an id the client can match or null.
func TestCheck(t *testing.T) {
	tests := []struct {
		msg, id string
		code    int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "1", 0},
		{`{"jsonrpc":"2.0","id":"a b","method":"initialize"}`, `"a b"`, 0},
		{`{"jsonrpc":"2.0","id":-3.5,"method":"x"}`, "-3.5", 0},
		{`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`, "", 0},
		{`{"jsonrpc":"2.0","id":4,"result":{}}`, "", 0}, // a response: not answered
		{`{"jsonrpc":"2.0","id":{"a":1},"result":{}}`, "", 0},
		{`{"jsonrpc":"2.0","id":5,"method":""}`, "5", -32600},
		{`{"jsonrpc":"2.0","method":""}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":[1],"method":"initialize"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":null,"method":"initialize"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":false,"method":"initialize"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":6,"method":7}`, "6", -32600},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":7}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":8}`, "8", -32600},
		{`{"jsonrpc":"2.0","id":9,"method":"x"`, "null", -32700},
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, "null", -32600},
	}
	for _, tt := range tests {
		id, code, text := check([]byte(tt.msg))
		if code != tt.code {
			t.Errorf("%s: code %d (%s), want %d", tt.msg, code, text, tt.code)
		}
		if code == 0 {
			if string(id) != tt.id {
				t.Errorf("%s: forwarded id %q, want %q", tt.msg, id, tt.id)
			}
			continue
		}
		got := "null"
		if r := idOf([]byte(tt.msg)); r != nil {
			got = string(r)
		}
		if got != tt.id {
			t.Errorf("%s: answered with id %s, want %s", tt.msg, got, tt.id)
		}
	}
}

// TestCheckBlocks: a block mm did not advertise or does not know is
// refused as invalid params naming its type; advertised ones pass.
func TestCheckBlocks(t *testing.T) {
	tests := []struct{ blocks, want string }{
		{`[{"type":"text","text":"hi"}]`, ""},
		{`[{"type":"resource_link","name":"a","uri":"file:///a.go"}]`, ""},
		{`[{"type":"resource","resource":{"uri":"file:///a.go","text":"x"}}]`, ""},
		{`[{"type":"resource","resource":{"uri":"file:///a.png","blob":"AA=="}}]`, ""},
		{`[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]`, `prompt block 1: content block type "image"`},
		{`[{"type":"audio","data":"AA==","mimeType":"audio/wav"}]`, `"audio"`},
		{`[{"type":"video","text":"x"}]`, `unknown content block type "video"`},
		{`[{"type":"sticker"}]`, `unknown content block type "sticker"`},
		{`[{"text":"no type"}]`, `no "type"`},
	}
	for _, tt := range tests {
		var blocks []sdk.ContentBlock
		if err := json.Unmarshal([]byte(tt.blocks), &blocks); err != nil {
			t.Fatalf("%s: %v", tt.blocks, err)
		}
		err := checkBlocks(blocks)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tt.blocks, err)
			}
			continue
		}
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, tt.want) {
			t.Errorf("%s: %v, want invalid params with %q", tt.blocks, err, tt.want)
		}
	}
	got := promptText(mustBlocks(t, `[{"type":"resource","resource":{"uri":"file:///w/a.png","blob":"AA=="}}]`), []string{"/w"})
	if got != "[attached file: /w/a.png]" {
		t.Errorf("a binary resource reads %q", got)
	}
	// A link out of the workspace says it was not read.
	got = promptText(mustBlocks(t, `[{"type":"resource_link","uri":"file:///etc/passwd","name":"passwd"}]`), []string{"/w"})
	if !strings.Contains(got, "/etc/passwd was attached but is outside the workspace: it was not read") {
		t.Errorf("a link outside reads %q", got)
	}
}

func mustBlocks(t *testing.T, s string) []sdk.ContentBlock {
	t.Helper()
	var b []sdk.ContentBlock
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		t.Fatal(err)
	}
	return b
}
