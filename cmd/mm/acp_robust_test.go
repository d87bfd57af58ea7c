package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPRejectedEditLeavesFile: the user rejects the edit; the file is
// byte-identical and the model is told the user declined.
func TestACPRejectedEditLeavesFile(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "reject_edit")
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	original := "hello world\r\nsecond line\n" // CRLF: byte-identical means byte-identical
	writeFile(t, file, original)
	info, _ := os.Stat(file)

	p := startAgent(t, dir, mmEnv(t, srv))
	p.client.choose = sdk.PermissionOptionKindRejectOnce
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)
	resp, err := p.prompt(ctx, id, "Change hello to goodbye")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason = %q", resp.StopReason)
	}
	if got := readFile(t, file); got != original {
		t.Errorf("file changed after a rejection: %q", got)
	}
	if after, _ := os.Stat(file); !after.ModTime().Equal(info.ModTime()) {
		t.Errorf("file rewritten after a rejection")
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d, want 3", len(reqs))
	}
	msgs := reqs[2].Messages
	last := msgs[len(msgs)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, "the user declined") || !strings.Contains(last.Content, "not changed") {
		t.Errorf("the model was not told: %+v", last)
	}
	updates, _ := p.client.snapshot()
	failed := false
	for _, u := range updates {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == "call_2" && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusFailed {
			failed = true
		}
	}
	if !failed {
		t.Errorf("the rejected edit's tool call did not end as failed:\n%s", strings.Join(describe(updates), "\n"))
	}
}

// TestACPCancelMidStream: a cancel while the model streams answers
// "cancelled", the updates sent before it arrive, and the session serves
// the next prompt. (The answer comes in milliseconds; the bound only
// tells a hang from a race-built binary on a loaded machine.)
func TestACPCancelMidStream(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "stall_mid_answer")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)

	type result struct {
		resp sdk.PromptResponse
		err  error
		at   time.Time
	}
	done := make(chan result, 1)
	go func() {
		r, err := p.prompt(ctx, id, "Explain everything")
		done <- result{r, err, time.Now()}
	}()
	select {
	case <-srv.StepStalled(0):
	case <-time.After(30 * time.Second):
		t.Fatal("the model stream never started")
	}
	p.client.waitUpdates(t, "the first words of the answer", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(messageText(us), "Here is the")
	})
	cancelled := time.Now()
	if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("a cancelled prompt must not be an error: %v", r.err)
	}
	if r.resp.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stop reason = %q, want cancelled", r.resp.StopReason)
	}
	if d := r.at.Sub(cancelled); d > hung {
		t.Errorf("cancel answered after %v: hung", d)
	}
	updates, _ := p.client.snapshot()
	if !strings.Contains(messageText(updates), "Here is") {
		t.Errorf("the text streamed before the cancel was not delivered: %q", messageText(updates))
	}
	if strings.Contains(messageText(updates), "_mm:") {
		t.Errorf("a cancel must not show a struggle note: %q", messageText(updates))
	}
}

// TestACPCancelKillsBash: a cancel while bash runs answers "cancelled"
// and the command's process is gone.
func TestACPCancelKillsBash(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "long_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)

	done := make(chan sdk.PromptResponse, 1)
	errs := make(chan error, 1)
	go func() {
		r, err := p.prompt(ctx, id, "Run the long job")
		errs <- err
		done <- r
	}()
	pid := waitPID(t, filepath.Join(dir, "child.pid"))
	start := time.Now()
	if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("cancelled prompt: %v", err)
	}
	r := <-done
	if d := time.Since(start); d > hung {
		t.Errorf("cancel answered after %v: hung", d)
	}
	if r.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stop reason = %q", r.StopReason)
	}
	if alive(pid) {
		t.Errorf("the bash command (pid %d) is still running after the cancel", pid)
	}
	// The model's history got a result for the interrupted call, and the
	// session still serves: the next prompt consumes the scenario's last
	// step.
	if _, err := p.prompt(ctx, id, "and now?"); err != nil {
		t.Fatalf("next prompt: %v", err)
	}
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Messages
	var sawResult bool
	for _, m := range msgs {
		if m.Role == "tool" && strings.Contains(m.Content, "cancelled") {
			sawResult = true
		}
	}
	if !sawResult {
		t.Errorf("the interrupted call has no result in history: %+v", msgs)
	}
}

// TestACPRobustIO speaks raw JSON-RPC: garbage, an unknown method and a
// 1 MiB prompt each get an error or a normal answer, stdout carries only
// JSON, and EOF while a command runs exits cleanly with the command gone.
func TestACPRobustIO(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "short_answer")
	dir := t.TempDir()
	r := startRawProcess(t, dir, mmEnv(t, srv)) // stdout as a whole: a process
	code := func(m rawMsg) int {
		if m.Error == nil {
			return 0
		}
		return m.Error.Code
	}

	r.send("this is not json")
	if m := r.wait("null"); code(m) != -32700 {
		t.Errorf("garbage: %s", m.Line)
	}
	r.send(`{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{}}`)
	if m := r.wait("7"); code(m) != -32601 {
		t.Errorf("unknown method: %s", m.Line)
	}
	r.send(`[1,2,3]`)
	if m := r.wait("null"); code(m) != -32600 {
		t.Errorf("batch: %s", m.Line)
	}
	sid := r.handshake(dir)
	big, _ := json.Marshal(strings.Repeat("x", 1<<20))
	r.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":` + string(big) + `}]}}`)
	if m := r.wait("3"); !strings.Contains(string(m.Result), `"stopReason":"end_turn"`) {
		t.Errorf("1 MiB prompt: %.300s", m.Line)
	}
	if got := len(srv.Requests()[0].Body); got < 1<<20 {
		t.Errorf("the model got %d bytes, the prompt was lost", got)
	}
	// A 20 MiB message (a large embedded file) gets an error answering
	// its own id, so the editor's request resolves, saying the limit; mm
	// goes on (issue 21, defect 6: it was answered with id null).
	huge := strings.Repeat("y", 20<<20)
	r.send(`{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"resource","resource":{"uri":"file:///big.txt","text":"` + huge + `"}}]},"id":4}`)
	if m := r.wait("4"); code(m) != -32600 || !strings.Contains(m.Error.Message, "mm takes at most 8.0 MiB per message") {
		t.Errorf("oversized: %.300s", m.Line)
	}
	r.send(`{"jsonrpc":"2.0","id":5,"method":"session/cancel_nothing","params":{}}`)
	if m := r.wait("5"); code(m) != -32601 {
		t.Errorf("still serving after an oversized message: %s", m.Line)
	}
	if err := r.close(); err != nil {
		t.Errorf("mm exited with %v after EOF", err)
	}
	r.until("the end", func([]rawMsg) bool { return true }) // fails on a non-JSON line
}

// TestACPEOFStopsRunningCommand: the editor goes away while bash runs;
// mm exits cleanly and leaves no child behind.
func TestACPEOFStopsRunningCommand(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "long_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)
	go p.prompt(ctx, id, "Run the long job")
	pid := waitPID(t, filepath.Join(dir, "child.pid"))
	p.stdin.Close()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err != nil {
			t.Errorf("mm exited with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mm did not exit after EOF")
	}
	if alive(pid) {
		t.Errorf("the bash command (pid %d) outlived mm", pid)
	}
}

// waitPID waits for a command to write its pid (the test polls a file:
// the command runs in another process tree).
func waitPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the command never wrote %s", path)
	return 0
}

// alive reports whether pid is a live (not zombie) process. Zombies count
// as gone: in a container PID 1 may not reap orphans.
func alive(pid int) bool {
	deadline := time.Now().Add(2 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if errors.Is(err, os.ErrNotExist) {
			return false
		}
		if err == nil {
			fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			if len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X") {
				return false
			}
		}
		if time.Now().After(deadline) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestACPCancelDuringPermission: a cancel while the editor shows the
// permission prompt ends the turn as cancelled and writes nothing.
func TestACPCancelDuringPermission(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "read_edit_answer")
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	writeFile(t, file, "hello world\nsecond line\n")
	p := startAgent(t, dir, mmEnv(t, srv))
	p.client.hold = make(chan struct{}) // never answered
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)
	type result struct {
		resp sdk.PromptResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := p.prompt(ctx, id, "change hello")
		done <- result{r, err}
	}()
	<-p.client.asked
	start := time.Now()
	if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.resp.StopReason != sdk.StopReasonCancelled {
		t.Errorf("prompt = %+v, %v; want cancelled", r.resp, r.err)
	}
	if d := time.Since(start); d > hung {
		t.Errorf("cancel answered after %v: hung", d)
	}
	if got := readFile(t, file); got != "hello world\nsecond line\n" {
		t.Errorf("file changed: %q", got)
	}
}

// TestACPConfigErrorKeepsServing (issue 15): with an unknown key in
// .mm/agent.yaml, mm acp still answers initialize, answers session/new
// and session/load with the one line (file, line, key, nearest key) as
// the JSON-RPC message, logs it on stderr, and exits cleanly at EOF. A
// prompt names no open session: it is refused as such.
func TestACPConfigErrorKeepsServing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, ".mm", "agent.yaml")
	writeFile(t, cfg, "model: x\nmaxTurn: 3\n")
	env := mmEnv(t, nil)
	for i, e := range env {
		if strings.HasPrefix(e, "MM_LOG=") {
			env[i] = "MM_LOG=" // stderr, as an editor sees it
		}
	}
	r := startRaw(t, dir, env)
	want := cfg + " line 2: unknown key \"maxTurn\" — did you mean `maxTurns`?"

	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if m := r.wait("1"); m.Result == nil {
		t.Fatalf("initialize was not answered with a result: %s", m.Line)
	}
	b, _ := json.Marshal(dir)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + string(b) + `,"mcpServers":[]}}`)
	if m := r.wait("2"); m.Error == nil || m.Error.Message != want {
		t.Errorf("session/new: %s\nwant the message %q", m.Line, want)
	}
	r.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess_x","prompt":[{"type":"text","text":"hi"}]}}`)
	if m := r.wait("3"); m.Error == nil || !strings.Contains(m.Line, "unknown session sess_x") {
		t.Errorf("session/prompt: %s", m.Line)
	}
	r.send(`{"jsonrpc":"2.0","id":4,"method":"session/load","params":{"sessionId":"sess_x","cwd":` + string(b) + `,"mcpServers":[]}}`)
	if m := r.wait("4"); m.Error == nil || m.Error.Message != want {
		t.Errorf("session/load: %s", m.Line)
	}
	if err := r.close(); err != nil {
		t.Errorf("mm exited with %v", err)
	}
	if stderr := r.stderr.String(); !strings.Contains(stderr, "mm: "+want+"\n") {
		t.Errorf("stderr lacks the line:\n%s", stderr)
	}
}

// TestACPEveryRequestAnswered (issue 15): requests an SDK client would not
// send each get exactly one answer, as JSON-RPC 2.0 says: an empty method
// name, an id that is an object, an array or null, and prompt blocks mm
// did not advertise or does not know.
func TestACPEveryRequestAnswered(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "short_answer")
	dir := t.TempDir()
	r := startRaw(t, dir, mmEnv(t, srv))
	sid := r.handshake(dir)
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
		r.send(tt.send)
		m := r.wait(tt.id)
		if m.Error == nil || m.Error.Code != tt.code || !strings.Contains(m.Error.Message, tt.msg) {
			t.Errorf("%s: got %s\nwant code %d and a message with %q", tt.name, m.Line, tt.code, tt.msg)
		}
	}
	// None reached the model, and the session still serves.
	r.send(prompt("18", `[{"type":"text","text":"say ok"}]`))
	if m := r.wait("18"); !strings.Contains(string(m.Result), "end_turn") {
		t.Errorf("a normal prompt after them: %s", m.Line)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("the model got %d requests, want 1 (the refused prompts must not reach it)", n)
	}
	if err := r.close(); err != nil {
		t.Errorf("mm exited with %v", err)
	}
	out := r.until("the end", func([]rawMsg) bool { return true })
	for id, as := range answers(out) {
		if want := map[string]int{"null": 5}[id]; len(as) != max(want, 1) {
			t.Errorf("id %s answered %d times:\n%v", id, len(as), as)
		}
	}
}

// TestACPStorm (issue 15): a seeded storm of malformed, mistyped and
// truncated messages; every request gets exactly one answer, nothing else
// does, and a normal prompt still works after it.
func TestACPStorm(t *testing.T) {
	t.Parallel()
	const seed, n = 15, 400
	srv := scenario(t, "short_answer")
	dir := t.TempDir()
	r := startRaw(t, dir, mmEnv(t, srv))
	sid := r.handshake(dir)

	lines, want := storm(rand.New(rand.NewPCG(seed, seed)), n, sid)
	r.send(lines...)
	r.until("an answer to every request of the storm", func(out []rawMsg) bool {
		got := answers(out)
		for id, k := range want {
			if len(got[id]) < k {
				return false
			}
		}
		return true
	})
	r.send(`{"jsonrpc":"2.0","id":"after","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"say ok"}]}}`)
	if m := r.wait(`"after"`); !strings.Contains(string(m.Result), "end_turn") {
		t.Errorf("a normal prompt after the storm (seed %d): %s", seed, m.Line)
	}
	if err := r.close(); err != nil {
		t.Errorf("mm exited with %v after the storm", err)
	}
	want[`"init"`], want[`"new"`], want[`"after"`] = 1, 1, 1
	got := answers(r.until("the end", func([]rawMsg) bool { return true }))
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
