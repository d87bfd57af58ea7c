package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// hung is the bound past which a test calls mm hung. It is not a speed
// budget: the binary may be race-built on a loaded machine.
const hung = 20 * time.Second

// cancelled waits for the answer of a prompt sent with async, what
// naming it, and fails the test unless it ended cancelled.
func cancelled(t *testing.T, what string, ch <-chan acptest.Answer) {
	t.Helper()
	if a := acptest.Await(t, what, ch); a.Err != nil || a.Resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("%s = %+v, %v; want stopReason cancelled", what, a.Resp, a.Err)
	}
}

func waitSignal(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hung):
		t.Fatalf("%s: not after %v", what, hung)
	}
}

// TestACPCancelAfterReplacedPrompt: a second prompt while the first runs
// cancels the first (it answers cancelled), and a session/cancel then
// still stops the second: the first prompt's return leaves the cancel
// func of the second in place, so that cancel is not lost and the second
// prompt does not hang.
func TestACPCancelAfterReplacedPrompt(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "two_stalls")
	p := w.session()

	first := p.stalling("first question", 0, "First")
	second := p.async("second question")
	cancelled(t, "the replaced prompt", first)
	waitSignal(t, "the second answer stalls", w.srv.StepStalled(1))
	p.WaitMessage("Second")
	p.Cancel(w.ctx, p.id)
	cancelled(t, "the cancelled second prompt", second)
	if n := len(w.srv.Requests()); n != 2 {
		t.Errorf("model requests = %d, want 2 (one per prompt)", n)
	}
	if text := p.answer(); strings.Contains(text, "_mm:") {
		t.Errorf("a cancel must not show a struggle note: %q", text)
	}
}

// TestACPCloseStopsRunningTurn: session/close while bash runs cancels the
// turn as session/cancel would: the prompt answers cancelled, the command
// is killed, and no model request follows (the scenario's second step,
// the model's reaction to the command, is never asked for). A prompt to
// the closed session is refused.
func TestACPCloseStopsRunningTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "long_bash")
	p := w.session()

	done := p.async("Run the long job")
	pid := waitPID(t, filepath.Join(w.dir, "child.pid"))
	closed := make(chan error, 1)
	go func() {
		_, err := p.Conn.CloseSession(w.ctx, sdk.CloseSessionRequest{SessionId: p.id})
		closed <- err
	}()
	cancelled(t, "the prompt of the closed session", done)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("session/close: %v", err)
		}
	case <-time.After(hung):
		t.Fatal("session/close did not answer")
	}
	if alive(pid) {
		t.Errorf("the bash command (pid %d) is still running after session/close", pid)
	}
	if n := len(w.srv.Requests()); n != 1 {
		t.Errorf("model requests = %d after close, want 1", n)
	}
	if _, err := p.prompt("still there?"); err == nil {
		t.Errorf("a prompt to a closed session was accepted")
	}
	if n := len(w.srv.Requests()); n != 1 {
		t.Errorf("model requests = %d after a prompt to the closed session, want 1", n)
	}
}

// TestACPAnswersRequestBeforeEOF: `printf '<initialize>\n' | mm acp`
// answers the request, then exits 0, even when the SDK sees EOF before
// the request is handled. That race, were mm to stop at EOF without
// waiting for its answers, would print nothing about one run in three: a
// few runs make it show.
func TestACPAnswersRequestBeforeEOF(t *testing.T) {
	t.Parallel()
	for range 5 {
		answersBeforeEOF(t)
	}
}

func answersBeforeEOF(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	b, _ := json.Marshal(dir)
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":"two","method":"session/new","params":{"cwd":` + string(b) + `,"mcpServers":[]}}` + "\n"
	cmd := exec.Command(mmBin(t), "acp")
	cmd.Dir = dir
	cmd.Env = mmEnv(t, nil, "MM_BASE_URL="+testenv.RefusedURL(t)+"/v1") // set up: session/new asks no server
	cmd.Stdin = strings.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("mm exited with %v", err)
		}
	case <-time.After(hung):
		cmd.Process.Kill()
		t.Fatal("mm did not exit after EOF")
	}
	answers := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout carried a non-JSON line: %q", l)
		}
		if m["method"] == nil {
			answers[string(mustJSON(m["id"]))] = m
		}
	}
	if a := answers["1"]; a == nil || a["result"] == nil {
		t.Errorf("initialize was not answered; stdout:\n%s", out.String())
	}
	if a := answers[`"two"`]; a == nil || a["result"] == nil {
		t.Errorf("session/new was not answered; stdout:\n%s", out.String())
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestACPCancelRightAfterPrompt: a session/cancel written right behind
// its session/prompt — in the same write, before the prompt's handler can
// have begun — always cancels that prompt; a cancel sent before a prompt
// never cancels it.
func TestACPCancelRightAfterPrompt(t *testing.T) {
	t.Parallel()
	steps := make([]llmtest.Step, 60)
	for i := range steps {
		steps[i] = llmtest.Step{Content: "answer"}
	}
	srv := llmtest.NewServer(llmtest.Scenario{Steps: steps})
	w := newWorldOn(t, srv)
	r := w.wire()
	sid := r.Handshake(w.dir)
	prompt := func(id string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"hello"}]}}`
	}
	cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sid + `"}}`
	stop := func(m acptest.Msg) string {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		json.Unmarshal(m.Result, &res)
		return res.StopReason
	}
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("p%d", i)
		r.Send(prompt(id) + "\n" + cancel)
		if got := stop(r.Wait(`"` + id + `"`)); got != "cancelled" {
			t.Fatalf("prompt %d followed by a cancel answered %q, want cancelled", i, got)
		}
	}
	r.Send(cancel + "\n" + prompt("after"))
	if got := stop(r.Wait(`"after"`)); got != "end_turn" {
		t.Errorf("a prompt sent after a cancel answered %q, want end_turn", got)
	}
}

// TestACPCancelRequest: $/cancel_request naming a running prompt stops
// its turn as session/cancel does — the model stream is cut, the prompt
// answers — and mm goes on serving.
func TestACPCancelRequest(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{Content: "A long answer that goes on", StallAfter: ptrTo(2)},
		{Content: "ok"},
	}})
	w := newWorldOn(t, srv)
	r := startWire(t, w.dir, w.env)
	sid := r.Handshake(w.dir)
	r.Send(acptest.Request("p", "session/prompt", map[string]any{"sessionId": sid, "prompt": []map[string]any{{"type": "text", "text": "go"}}}))
	waitSignal(t, "the answer", srv.StepStalled(0))
	r.Send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p"}}`)
	if a := r.Wait(`"p"`); !strings.Contains(a.Line, `"stopReason":"cancelled"`) {
		t.Errorf("the cancelled prompt answered %s, want cancelled", a.Line)
	}
	if a := r.Prompt("q", sid, "again"); !strings.Contains(a.Line, `"end_turn"`) {
		t.Errorf("the next prompt answered %s", a.Line)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	r.CheckSchema()
}

// TestACPCancelMidStream: a cancel while the model streams answers
// "cancelled", the updates sent before it arrive, and the session serves
// the next prompt. (The answer comes in milliseconds; the bound only
// tells a hang from a race-built binary on a loaded machine.)
func TestACPCancelMidStream(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "stall_mid_answer")
	p := w.session()
	done := p.stalling("Explain everything", 0, "Here is the")
	start := time.Now()
	p.Cancel(w.ctx, p.id)
	cancelled(t, "the prompt cancelled mid-stream", done)
	if d := time.Since(start); d > hung {
		t.Errorf("cancel answered after %v: hung", d)
	}
	if msg := p.answer(); !strings.Contains(msg, "Here is") || strings.Contains(msg, "_mm:") {
		t.Errorf("the text streamed before the cancel was not delivered, or a cancel showed a struggle note: %q", msg)
	}
}

// TestACPCancelKillsBash: a cancel while bash runs answers "cancelled"
// and the command's process is gone.
func TestACPCancelKillsBash(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "long_bash")
	p := w.session()
	done := p.async("Run the long job")
	pid := waitPID(t, filepath.Join(w.dir, "child.pid"))
	start := time.Now()
	p.Cancel(w.ctx, p.id)
	cancelled(t, "the prompt whose command runs", done)
	if d := time.Since(start); d > hung {
		t.Errorf("cancel answered after %v: hung", d)
	}
	if alive(pid) {
		t.Errorf("the bash command (pid %d) is still running after the cancel", pid)
	}
	// The model's history got a result for the interrupted call, and the
	// session still serves: the next prompt consumes the scenario's last
	// step.
	p.turn("and now?")
	reqs := w.srv.Requests()
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

// TestACPEOFStopsRunningCommand: the editor goes away while bash runs;
// mm exits cleanly and leaves no child behind.
func TestACPEOFStopsRunningCommand(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "long_bash")
	p := w.session()
	p.async("Run the long job")
	pid := waitPID(t, filepath.Join(w.dir, "child.pid"))
	p.Stop()
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
	w := newWorld(t, "read_edit_answer")
	file := w.write("hello.txt", "hello world\nsecond line\n")
	p := w.session()
	p.Hold() // never answered
	done := p.async("change hello")
	<-p.Asked()
	start := time.Now()
	p.Cancel(w.ctx, p.id)
	cancelled(t, "the prompt whose question is open", done)
	if d := time.Since(start); d > hung {
		t.Errorf("cancel answered after %v: hung", d)
	}
	if got := readFile(t, file); got != "hello world\nsecond line\n" {
		t.Errorf("file changed: %q", got)
	}
}
