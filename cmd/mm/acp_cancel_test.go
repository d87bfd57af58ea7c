package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// hung is the bound past which a test calls mm hung. It is not a speed
// budget: the binary may be race-built on a loaded machine.
const hung = 20 * time.Second

type promptResult struct {
	resp sdk.PromptResponse
	err  error
}

func (p *agentProc) promptAsync(t *testing.T, id sdk.SessionId, text string) <-chan promptResult {
	ctx := testenv.Context(t)
	done := make(chan promptResult, 1)
	go func() {
		r, err := p.prompt(ctx, id, text)
		done <- promptResult{r, err}
	}()
	return done
}

func waitResult(t *testing.T, what string, ch <-chan promptResult) promptResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(hung):
		t.Fatalf("%s: no answer after %v", what, hung)
		return promptResult{}
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

// TestACPCancelAfterReplacedPrompt (issue 9, defect 3): a second prompt
// while the first runs cancels the first (it answers cancelled), and a
// session/cancel then still stops the second. Before the fix the first
// prompt's return deleted the SDK's cancel func, which belonged to the
// second, and the cancel was lost: the second prompt hung.
func TestACPCancelAfterReplacedPrompt(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "two_stalls")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)

	first := p.promptAsync(t, id, "first question")
	waitSignal(t, "the first answer stalls", srv.StepStalled(0))
	p.client.waitUpdates(t, "the first answer's words", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(messageText(us), "First")
	})
	second := p.promptAsync(t, id, "second question")

	r := waitResult(t, "the replaced prompt", first)
	if r.err != nil || r.resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("replaced prompt = %+v, %v; want stopReason cancelled", r.resp, r.err)
	}
	waitSignal(t, "the second answer stalls", srv.StepStalled(1))
	p.client.waitUpdates(t, "the second answer's words", func(us []sdk.SessionUpdate) bool {
		return strings.Contains(messageText(us), "Second")
	})
	if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	r = waitResult(t, "the cancelled second prompt", second)
	if r.err != nil || r.resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("second prompt = %+v, %v; want stopReason cancelled", r.resp, r.err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("model requests = %d, want 2 (one per prompt)", n)
	}
	updates, _ := p.client.snapshot()
	if text := messageText(updates); strings.Contains(text, "_mm:") {
		t.Errorf("a cancel must not show a struggle note: %q", messageText(updates))
	}
}

// TestACPCloseStopsRunningTurn (issue 9, defect 4): session/close while
// bash runs cancels the turn as session/cancel would: the prompt answers
// cancelled, the command is killed, and no model request follows (the
// scenario's second step, the model's reaction to the command, is never
// asked for). A prompt to the closed session is refused.
func TestACPCloseStopsRunningTurn(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "long_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)

	done := p.promptAsync(t, id, "Run the long job")
	pid := waitPID(t, filepath.Join(dir, "child.pid"))
	closed := make(chan error, 1)
	go func() {
		_, err := p.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: id})
		closed <- err
	}()
	r := waitResult(t, "the prompt of the closed session", done)
	if r.err != nil || r.resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("prompt = %+v, %v; want stopReason cancelled", r.resp, r.err)
	}
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
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("model requests = %d after close, want 1", n)
	}
	if _, err := p.prompt(ctx, id, "still there?"); err == nil {
		t.Errorf("a prompt to a closed session was accepted")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("model requests = %d after a prompt to the closed session, want 1", n)
	}
}

// TestACPAnswersRequestBeforeEOF (issue 9, defect 10): `printf
// '<initialize>\n' | mm acp` answers the request, then exits 0. Before the
// fix the SDK saw EOF first and mm printed nothing, about one run in
// three: a few runs make the old race show.
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

// TestACPCancelRightAfterPrompt (issue 9 defect 3, A7): a session/cancel
// written right behind its session/prompt — in the same write, before the
// prompt's handler can have begun — always cancels that prompt; a cancel
// sent before a prompt never cancels it.
func TestACPCancelRightAfterPrompt(t *testing.T) {
	t.Parallel()
	steps := make([]llmtest.Step, 60)
	for i := range steps {
		steps[i] = llmtest.Step{Content: "answer"}
	}
	srv := llmtest.NewServer(llmtest.Scenario{Steps: steps})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	r := startRaw(t, dir, mmEnv(t, srv))
	sid := r.handshake(dir)
	prompt := func(id string) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"hello"}]}}`
	}
	cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"` + sid + `"}}`
	stop := func(m rawMsg) string {
		var res struct {
			StopReason string `json:"stopReason"`
		}
		json.Unmarshal(m.Result, &res)
		return res.StopReason
	}
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("p%d", i)
		r.send(prompt(id) + "\n" + cancel)
		if got := stop(r.wait(`"` + id + `"`)); got != "cancelled" {
			t.Fatalf("prompt %d followed by a cancel answered %q, want cancelled", i, got)
		}
	}
	r.send(cancel + "\n" + prompt("after"))
	if got := stop(r.wait(`"after"`)); got != "end_turn" {
		t.Errorf("a prompt sent after a cancel answered %q, want end_turn", got)
	}
}
