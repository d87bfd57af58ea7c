package main

import (
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
)

var terminalCaps = sdk.ClientCapabilities{Terminal: true}

// hasTerminal reports whether an update shows a terminal in a tool call.
func hasTerminal(u sdk.SessionUpdate) bool {
	if u.ToolCallUpdate == nil {
		return false
	}
	for _, c := range u.ToolCallUpdate.Content {
		if c.Terminal != nil && c.Terminal.TerminalId != "" {
			return true
		}
	}
	return false
}

// TestACPBashInTerminal (T4): with the terminal capability, bash runs in
// the editor's terminal, shown in the tool call while it runs; the model
// gets its output and exit code; the terminal is released.
func TestACPBashInTerminal(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "terminal_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.sessionWith(t, ctx, dir, terminalCaps, nil)
	if _, err := p.prompt(ctx, id, "run it"); err != nil {
		t.Fatal(err)
	}
	result := lastToolResult(t, srv.Requests())
	if !strings.Contains(result, "hello-from-terminal") || !strings.Contains(result, "oops") || !strings.Contains(result, "[exit code: 3") {
		t.Errorf("the model got %q", result)
	}
	p.client.mu.Lock()
	calls := strings.Join(p.client.termCalls, " ")
	p.client.mu.Unlock()
	if !strings.HasPrefix(calls, "create wait output") || !strings.HasSuffix(calls, "release") {
		t.Errorf("terminal calls: %s", calls)
	}
	updates, _ := p.client.snapshot()
	shown, completed := -1, -1
	for i, u := range updates {
		if hasTerminal(u) && shown < 0 {
			shown = i
		}
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusFailed {
			completed = i
			if !hasTerminal(u) {
				t.Error("the final update of the call no longer shows the terminal")
			}
		}
	}
	if shown < 0 || completed < 0 || shown > completed {
		t.Errorf("the terminal was not shown while the command ran (shown at %d, finished at %d):\n%s", shown, completed, strings.Join(describe(updates), "\n"))
	}
}

// TestACPCancelKillsTerminal (T4): a cancel while bash runs in the
// editor's terminal kills it there and answers cancelled.
func TestACPCancelKillsTerminal(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "long_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.sessionWith(t, ctx, dir, terminalCaps, nil)
	done := make(chan error, 1)
	var resp sdk.PromptResponse
	go func() {
		var err error
		resp, err = p.prompt(ctx, id, "Run the long job")
		done <- err
	}()
	p.client.waitUpdates(t, "the terminal in the tool call", func(us []sdk.SessionUpdate) bool {
		for _, u := range us {
			if hasTerminal(u) {
				return true
			}
		}
		return false
	})
	p.client.mu.Lock()
	var pid int
	for _, term := range p.client.terms {
		pid = term.cmd.Process.Pid // bash, which execs sleep
	}
	p.client.mu.Unlock()
	if err := p.conn.Cancel(ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != sdk.StopReasonCancelled {
		t.Errorf("stop reason %s, want cancelled", resp.StopReason)
	}
	p.client.mu.Lock()
	calls := strings.Join(p.client.termCalls, " ")
	p.client.mu.Unlock()
	if !strings.Contains(calls, "kill") || !strings.HasSuffix(calls, "release") {
		t.Errorf("terminal calls: %s", calls)
	}
	if alive(pid) {
		t.Errorf("the command (pid %d) survived the cancel", pid)
	}
}

// TestACPEOFEndsTerminal: the editor going away while bash runs in its
// terminal ends the turn; mm exits promptly (checked by startAgent's
// cleanup) instead of waiting for the command.
func TestACPEOFEndsTerminal(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "long_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.sessionWith(t, ctx, dir, terminalCaps, nil)
	go p.prompt(ctx, id, "Run the long job")
	p.client.waitUpdates(t, "the terminal in the tool call", func(us []sdk.SessionUpdate) bool {
		for _, u := range us {
			if hasTerminal(u) {
				return true
			}
		}
		return false
	})
	p.stdin.Close()
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(hung):
		t.Fatal("mm did not exit after EOF while bash ran in the editor's terminal")
	}
}

// TestACPTerminalTimeout (T4): the timeout kills the command in the
// editor's terminal; the model gets its output and the timeout advice.
func TestACPTerminalTimeout(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "terminal_timeout")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.sessionWith(t, ctx, dir, terminalCaps, nil)
	if _, err := p.prompt(ctx, id, "run it"); err != nil {
		t.Fatal(err)
	}
	result := lastToolResult(t, srv.Requests())
	if !strings.Contains(result, "started") || !strings.Contains(result, "timed out after 1s") {
		t.Errorf("the model got %q", result)
	}
	p.client.mu.Lock()
	calls := strings.Join(p.client.termCalls, " ")
	p.client.mu.Unlock()
	if calls != "create wait kill output release" {
		t.Errorf("terminal calls: %s", calls)
	}
}

// TestACPBashWithoutTerminal (T4): without the capability no terminal/*
// call is made and bash runs locally, with the same text for the model.
func TestACPBashWithoutTerminal(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "terminal_bash")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)
	if _, err := p.prompt(ctx, id, "run it"); err != nil {
		t.Fatal(err)
	}
	if result := lastToolResult(t, srv.Requests()); !strings.Contains(result, "hello-from-terminal") || !strings.Contains(result, "[exit code: 3") {
		t.Errorf("the model got %q", result)
	}
	p.client.mu.Lock()
	defer p.client.mu.Unlock()
	if len(p.client.termCalls) > 0 {
		t.Errorf("terminal/* called without the capability: %v", p.client.termCalls)
	}
}

// TestACPTerminalDropsSecrets (issue 9 defect 2, T4): the editor's
// terminal has the editor's environment — here the test's, which mm, as
// an editor's child, shares; a variable whose name looks secret is unset
// before the command runs, an ordinary one is kept.
func TestACPTerminalDropsSecrets(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "terminal_env")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv, "DEPLOY_TOKEN=tok-0123456789", "PLAIN_SETTING=visible"))
	ctx := testenv.Context(t)
	id := p.sessionWith(t, ctx, dir, terminalCaps, nil)
	if _, err := p.prompt(ctx, id, "print it"); err != nil {
		t.Fatal(err)
	}
	p.client.mu.Lock()
	calls := strings.Join(p.client.termCalls, " ")
	p.client.mu.Unlock()
	if !strings.HasPrefix(calls, "create") {
		t.Fatalf("the command did not run in the terminal: %s", calls)
	}
	if result := lastToolResult(t, srv.Requests()); !strings.Contains(result, "token=[] plain=[visible]") {
		t.Errorf("the model got %q", result)
	}
}
