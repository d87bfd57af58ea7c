package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// TestACPRejectedEditLeavesFile: the user rejects the edit; the file is
// byte-identical and the model is told the user declined.
func TestACPRejectedEditLeavesFile(t *testing.T) {
	srv := scenario(t, "reject_edit")
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	original := "hello world\r\nsecond line\n" // CRLF: byte-identical means byte-identical
	writeFile(t, file, original)
	info, _ := os.Stat(file)

	p := startAgent(t, dir, mmEnv(t, srv))
	p.client.choose = sdk.PermissionOptionKindRejectOnce
	ctx := testContext(t)
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
	srv := scenario(t, "stall_mid_answer")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testContext(t)
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
	srv := scenario(t, "long_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testContext(t)
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
	srv := scenario(t, "short_answer")
	dir := t.TempDir()
	cmd := exec.Command(mmBinary, "acp")
	cmd.Dir = dir
	cmd.Env = mmEnv(t, srv)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	lines := make(chan map[string]any, 64)
	nonJSON := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				nonJSON <- sc.Text()
				continue
			}
			lines <- m
		}
		close(lines)
	}()
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(stdin, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// wait returns the response with the given id, skipping notifications.
	wait := func(id any) map[string]any {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("mm closed stdout while waiting for id %v", id)
				}
				if fmt.Sprint(m["id"]) == fmt.Sprint(id) && m["method"] == nil {
					return m
				}
			case l := <-nonJSON:
				t.Fatalf("stdout carried a non-JSON line: %q", l)
			case <-timeout:
				t.Fatalf("no answer for id %v", id)
			}
		}
	}
	errCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}

	send("this is not json")
	if m := wait(nil); errCode(m) != -32700 {
		t.Errorf("garbage: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{}}`)
	if m := wait(7); errCode(m) != -32601 {
		t.Errorf("unknown method: %v", m)
	}
	send(`[1,2,3]`)
	if m := wait(nil); errCode(m) != -32600 {
		t.Errorf("batch: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
	if m := wait(1); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	b, _ := json.Marshal(dir)
	send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":` + string(b) + `,"mcpServers":[]}}`)
	m := wait(2)
	sid, _ := m["result"].(map[string]any)["sessionId"].(string)
	if sid == "" {
		t.Fatalf("session/new: %v", m)
	}
	big, _ := json.Marshal(strings.Repeat("x", 1<<20))
	send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":` + string(big) + `}]}}`)
	if m := wait(3); m["result"] == nil {
		t.Errorf("1 MiB prompt: %v", m)
	} else if r := m["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Errorf("1 MiB prompt: %v", r)
	}
	if got := len(srv.Requests()[0].Body); got < 1<<20 {
		t.Errorf("the model got %d bytes, the prompt was lost", got)
	}
	// A message over the limit gets an error and mm goes on.
	huge := strings.Repeat("y", 9<<20)
	send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"` + sid + `","prompt":[{"type":"text","text":"` + huge + `"}]}}`)
	if m := wait(nil); errCode(m) != -32600 {
		t.Errorf("oversized: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"session/cancel_nothing","params":{}}`)
	if m := wait(5); errCode(m) != -32601 {
		t.Errorf("still serving after an oversized message: %v", m)
	}

	stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("mm exited with %v after EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mm did not exit after EOF on stdin")
	}
	select {
	case l := <-nonJSON:
		t.Errorf("stdout carried a non-JSON line: %q", l)
	default:
	}
}

// TestACPEOFStopsRunningCommand: the editor goes away while bash runs;
// mm exits cleanly and leaves no child behind.
func TestACPEOFStopsRunningCommand(t *testing.T) {
	srv := scenario(t, "long_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testContext(t)
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
	srv := scenario(t, "read_edit_answer")
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	writeFile(t, file, "hello world\nsecond line\n")
	p := startAgent(t, dir, mmEnv(t, srv))
	p.client.hold = make(chan struct{}) // never answered
	ctx := testContext(t)
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
