package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
)

// TestACPRejectedEditLeavesFile: the user rejects the edit; the file is
// byte-identical and the model is told the user declined.
func TestACPRejectedEditLeavesFile(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "reject_edit")
	original := "hello world\r\nsecond line\n" // CRLF: byte-identical means byte-identical
	file := w.write("hello.txt", original)
	info, _ := os.Stat(file)

	p := w.session()
	p.Choose(sdk.PermissionOptionKindRejectOnce)
	p.endTurn("Change hello to goodbye")
	if got := readFile(t, file); got != original {
		t.Errorf("file changed after a rejection: %q", got)
	}
	if after, _ := os.Stat(file); !after.ModTime().Equal(info.ModTime()) {
		t.Errorf("file rewritten after a rejection")
	}
	reqs := w.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d, want 3", len(reqs))
	}
	last := reqs[2].Last()
	if last.Role != "tool" || !strings.Contains(last.Content, "the user declined") || !strings.Contains(last.Content, "not changed") {
		t.Errorf("the model was not told: %+v", last)
	}
	updates := p.Updates()
	failed := false
	for _, u := range updates {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "call_2" && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusFailed {
			failed = true
		}
	}
	if !failed {
		t.Errorf("the rejected edit's tool call did not end as failed:\n%s", strings.Join(acptest.Describe(updates), "\n"))
	}
}

// TestACPRobustIO speaks raw JSON-RPC: garbage, an unknown method and a
// 1 MiB prompt each get an error or a normal answer, stdout carries only
// JSON, and EOF while a command runs exits cleanly with the command gone.
func TestACPRobustIO(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "short_answer")
	r := startWire(t, w.dir, w.env) // stdout as a whole: a process
	code := func(m acptest.Msg) int {
		if m.Error == nil {
			return 0
		}
		return m.Error.Code
	}

	r.Send("this is not json")
	if m := r.Wait("null"); code(m) != -32700 {
		t.Errorf("garbage: %s", m.Line)
	}
	r.Send(`{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{}}`)
	if m := r.Wait("7"); code(m) != -32601 {
		t.Errorf("unknown method: %s", m.Line)
	}
	r.Send(`[1,2,3]`)
	if m := r.Wait("null"); code(m) != -32600 {
		t.Errorf("batch: %s", m.Line)
	}
	sid := r.Handshake(w.dir)
	big, _ := json.Marshal(strings.Repeat("x", 1<<20))
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":` + string(big) + `}]}}`)
	if m := r.Wait("3"); !strings.Contains(string(m.Result), `"stopReason":"end_turn"`) {
		t.Errorf("1 MiB prompt: %.300s", m.Line)
	}
	if got := len(w.srv.Requests()[0].Body); got < 1<<20 {
		t.Errorf("the model got %d bytes, the prompt was lost", got)
	}
	// A 20 MiB message (a large embedded file) gets an error answering
	// its own id, so the editor's request resolves, saying the limit; mm
	// goes on. An answer with id null would leave that request waiting.
	huge := strings.Repeat("y", 20<<20)
	r.Send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"resource","resource":{"uri":"file:///big.txt","text":"` + huge + `"}}]},"id":4}`)
	if m := r.Wait("4"); code(m) != -32600 || !strings.Contains(m.Error.Message, "mm takes at most 8.0 MiB per message") {
		t.Errorf("oversized: %.300s", m.Line)
	}
	r.Send(`{"jsonrpc":"2.0","id":5,"method":"session/cancel_nothing","params":{}}`)
	if m := r.Wait("5"); code(m) != -32601 {
		t.Errorf("still serving after an oversized message: %s", m.Line)
	}
	if err := r.Close(); err != nil {
		t.Errorf("mm exited with %v after EOF", err)
	}
	r.Until("the end", func([]acptest.Msg) bool { return true }) // fails on a non-JSON line
}

// TestACPConfigErrorKeepsServing: with an unknown key in .mm/agent.yaml,
// mm acp still answers initialize, answers session/new and session/load
// with the one line (file, line, key, nearest key) as the JSON-RPC
// message, logs it on stderr, and exits cleanly at EOF. A prompt names no
// open session: it is refused as such.
func TestACPConfigErrorKeepsServing(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "", "MM_LOG=") // the log on stderr, as an editor sees it
	cfg := w.write(".mm/agent.yaml", "model: x\nmaxTurn: 3\n")
	dir := w.dir
	r := w.wire()
	want := cfg + " line 2: unknown key \"maxTurn\" — did you mean `maxTurns`?"

	r.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if m := r.Wait("1"); m.Result == nil {
		t.Fatalf("initialize was not answered with a result: %s", m.Line)
	}
	b, _ := json.Marshal(dir)
	r.Send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + string(b) + `,"mcpServers":[]}}`)
	if m := r.Wait("2"); m.Error == nil || m.Error.Message != want {
		t.Errorf("session/new: %s\nwant the message %q", m.Line, want)
	}
	r.Send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess_x","prompt":[{"type":"text","text":"hi"}]}}`)
	if m := r.Wait("3"); m.Error == nil || !strings.Contains(m.Line, "unknown session sess_x") {
		t.Errorf("session/prompt: %s", m.Line)
	}
	r.Send(`{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"sess_x","cwd":` + string(b) + `,"mcpServers":[]}}`)
	if m := r.Wait("4"); m.Error == nil || m.Error.Message != want {
		t.Errorf("session/load: %s", m.Line)
	}
	if err := r.Close(); err != nil {
		t.Errorf("mm exited with %v", err)
	}
	if stderr := r.Stderr.String(); !strings.Contains(stderr, "mm: "+want+"\n") {
		t.Errorf("stderr lacks the line:\n%s", stderr)
	}
}

// TestACPEveryRequestAnswered: requests an SDK client would not send each
// get exactly one answer, as JSON-RPC 2.0 says: an empty method name, an
// id that is an object, an array or null, and prompt blocks mm did not
// advertise or does not know.
func TestACPEveryRequestAnswered(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "short_answer")
	r := w.wire()
	sid := r.Handshake(w.dir)
	prompt := func(id string, blocks string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":` + blocks + `}}`
	}
	tests := []struct {
		name, send, id string
		code           int
		msg            string // in the error message
	}{
		{"empty method", `{"jsonrpc":"2.0","id":10,"method":"","params":{}}`, "10", -32600, "method name is empty"},
		{"empty method, notification", `{"jsonrpc":"2.0","method":""}`, "null", -32600, "method name is empty"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, "null", -32600, "string or a number"},
		{"array id", `{"jsonrpc":"2.0","id":[11],"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`, "null", -32600, "string or a number"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"session/new","params":{}}`, "null", -32600, "string or a number"},
		{"boolean id", `{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}`, "null", -32600, "string or a number"},
		{"method not a string", `{"jsonrpc":"2.0","id":12,"method":5}`, "12", -32600, "string method"},
		{"image not advertised", prompt("13", `[{"type":"text","text":"what is this?"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]`), "13", -32602, `block 1: content block type "image" is not supported`},
		{"audio not advertised", prompt("14", `[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}]`), "14", -32602, `"audio" is not supported`},
		{"unknown type", prompt("15", `[{"type":"video","text":"x","uri":"file:///a.mp4"}]`), "15", -32602, `unknown content block type "video"`},
		{"unknown type without fields", prompt("16", `[{"type":"hologram"}]`), "16", -32602, `unknown content block type "hologram"`},
		{"no type", prompt("17", `[{"text":"hi"}]`), "17", -32602, `no "type"`},
	}
	for _, tt := range tests {
		r.Send(tt.send)
		m := r.Wait(tt.id)
		if m.Error == nil || m.Error.Code != tt.code || !strings.Contains(m.Error.Message, tt.msg) {
			t.Errorf("%s: got %s\nwant code %d and a message with %q", tt.name, m.Line, tt.code, tt.msg)
		}
	}
	// None reached the model, and the session still serves.
	r.Send(prompt("18", `[{"type":"text","text":"say ok"}]`))
	if m := r.Wait("18"); !strings.Contains(string(m.Result), "end_turn") {
		t.Errorf("a normal prompt after them: %s", m.Line)
	}
	if n := len(w.srv.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want 1 (the refused prompts must not reach it)", n)
	}
	if err := r.Close(); err != nil {
		t.Errorf("mm exited with %v", err)
	}
	out := r.Until("the end", func([]acptest.Msg) bool { return true })
	for id, as := range acptest.Answers(out) {
		if want := map[string]int{"null": 5}[id]; len(as) != max(want, 1) {
			t.Errorf("id %s answered %d times:\n%v", id, len(as), as)
		}
	}
}

// TestACPStorm: a seeded storm of malformed, mistyped and truncated
// messages; every request gets exactly one answer, nothing else does, and
// a normal prompt still works after it.
func TestACPStorm(t *testing.T) {
	t.Parallel()
	const seed, n = 15, 400
	w := newWorld(t, "short_answer")
	r := w.wire()
	sid := r.Handshake(w.dir)

	lines, want := storm(rand.New(rand.NewPCG(seed, seed)), n, sid)
	r.Send(lines...)
	r.Until("an answer to every request of the storm", func(out []acptest.Msg) bool {
		got := acptest.Answers(out)
		for id, k := range want {
			if len(got[id]) < k {
				return false
			}
		}
		return true
	})
	r.Send(`{"jsonrpc":"2.0","id":"after","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"say ok"}]}}`)
	if m := r.Wait(`"after"`); !strings.Contains(string(m.Result), "end_turn") {
		t.Errorf("a normal prompt after the storm (seed %d): %s", seed, m.Line)
	}
	if err := r.Close(); err != nil {
		t.Errorf("mm exited with %v after the storm", err)
	}
	want[`"init"`], want[`"new"`], want[`"after"`] = 1, 1, 1
	got := acptest.Answers(r.Until("the end", func([]acptest.Msg) bool { return true }))
	for id, k := range want {
		if len(got[id]) != k {
			t.Errorf("seed %d: id %s answered %d times, want %d", seed, id, len(got[id]), k)
		}
	}
	for id, as := range got {
		if want[id] == 0 {
			t.Errorf("seed %d: an answer nobody asked for: %s", seed, as[0].Line)
		}
	}
	if t.Failed() {
		t.Logf("the storm:\n%s", strings.Join(lines, "\n"))
	}
}

// storm writes n messages and the answers they call for, by id key: a
// request with a string or number id is answered once with it; anything
// malformed once with id null; notifications and responses never.
func storm(rnd *rand.Rand, n int, sid string) ([]string, map[string]int) {
	want := map[string]int{}
	methods := []string{"initialize", "session/new", "session/prompt", "session/cancel", "session/load", "session/set_mode",
		"authenticate", "session/close", "session/list", "no/such", "$/cancel_request", "_mm/ext", ""}
	params := []string{``, `,"params":null`, `,"params":5`, `,"params":"x"`, `,"params":[]`, `,"params":{}`,
		`,"params":{"cwd":5}`, `,"params":{"cwd":"relative/dir","mcpServers":[]}`, `,"params":{"protocolVersion":"one"}`,
		`,"params":{"sessionId":{"a":1},"prompt":[]}`, `,"params":{"sessionId":"sess_nope","prompt":[{"type":"text","text":"hi"}]}`,
		`,"params":{"sessionId":"` + sid + `","prompt":"hi"}`,
		`,"params":{"sessionId":"` + sid + `","prompt":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`,"params":{"sessionId":"` + sid + `","prompt":[{"type":"blob"}]}`,
		`,"params":{"sessionId":"` + sid + `","prompt":[5]}`,
		`,"params":{"requestId":1}`}
	var lines []string
	for i := range n {
		id := fmt.Sprint(1000 + i)
		if rnd.IntN(3) == 0 {
			id = fmt.Sprintf(`"s%d"`, i)
		}
		method := methods[rnd.IntN(len(methods))]
		p := params[rnd.IntN(len(params))]
		if method == "session/close" {
			p = strings.ReplaceAll(p, sid, "sess_nope") // the session serves the prompt after the storm
		}
		req := `{"jsonrpc":"2.0","id":` + id + `,"method":` + strconv.Quote(method) + p + `}`
		switch k := rnd.IntN(10); {
		case k < 4: // a request, well formed or mistyped
			lines = append(lines, req)
			want[id]++
		case k < 6: // truncated
			lines = append(lines, req[:1+rnd.IntN(len(req)-1)])
			want["null"]++
		case k == 6: // an id mm cannot echo
			bad := []string{`{"a":1}`, `[1]`, `null`, `true`}[rnd.IntN(4)]
			if method == "" {
				method = "x"
			}
			lines = append(lines, `{"jsonrpc":"2.0","id":`+bad+`,"method":`+strconv.Quote(method)+p+`}`)
			want["null"]++
		case k == 7: // a notification: never answered (an empty method is invalid: answered)
			if method == "" {
				want["null"]++
			}
			lines = append(lines, `{"jsonrpc":"2.0","method":`+strconv.Quote(method)+p+`}`)
		case k == 8: // a response to a request mm never sent: not answered
			lines = append(lines, `{"jsonrpc":"2.0","id":`+fmt.Sprint(5000+i)+`,"result":{}}`)
		default: // not JSON-RPC at all
			lines = append(lines, []string{`garbage`, `[]`, `[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, `"str"`, `42`, `{}`, `{"jsonrpc":"2.0"}`, `{"id":` + id + `}`}[rnd.IntN(8)])
			if strings.HasPrefix(lines[len(lines)-1], `{"id":`) {
				want[id]++
			} else {
				want["null"]++
			}
		}
	}
	return lines, want
}
