package main

import (
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
)

// inTerminal is the fake editor with the terminal capability: bash runs
// in its terminals.
var inTerminal = acptest.Options{Caps: sdk.ClientCapabilities{Terminal: true}}

// withForms is the fake editor that shows forms (elicitation.form).
var withForms = acptest.Options{Caps: sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}}}}

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

// runIt runs the named scenario's turn, "run it", in an editor with opts,
// and returns the editor and the last tool result the model was sent.
func runIt(t *testing.T, name string, opts acptest.Options) (*editor, string) {
	t.Helper()
	w := newWorld(t, name)
	p := w.session(opts)
	p.turn("run it")
	return p, lastToolResult(t, w.srv.Requests())
}

// showsTerminal reports whether an update shows a terminal in a tool call.
func showsTerminal(us []sdk.SessionUpdate) bool { return slices.ContainsFunc(us, hasTerminal) }

// TestACPBashInTerminal: with the terminal capability, bash runs in the
// editor's terminal, shown in the tool call while it runs; the model gets
// its output and exit code; the terminal is released.
func TestACPBashInTerminal(t *testing.T) {
	t.Parallel()
	p, result := runIt(t, "terminal_bash", inTerminal)
	if !strings.Contains(result, "hello-from-terminal") || !strings.Contains(result, "oops") || !strings.Contains(result, "[exit code: 3") {
		t.Errorf("the model got %q", result)
	}
	calls := strings.Join(p.TerminalCalls(), " ")
	if !strings.HasPrefix(calls, "create wait output") || !strings.HasSuffix(calls, "release") {
		t.Errorf("terminal calls: %s", calls)
	}
	updates := p.Updates()
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
		t.Errorf("the terminal was not shown while the command ran (shown at %d, finished at %d):\n%s", shown, completed, strings.Join(acptest.Describe(updates), "\n"))
	}
}

// TestACPCancelKillsTerminal: a cancel while bash runs in the editor's
// terminal kills it there and answers cancelled.
func TestACPCancelKillsTerminal(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "long_bash")
	p := w.session(inTerminal)
	done := p.async("Run the long job")
	p.WaitUpdates("the terminal in the tool call", showsTerminal)
	pids := p.TerminalPIDs()
	if len(pids) != 1 {
		t.Fatalf("terminals running: %v, want the command's", pids)
	}
	pid := pids[0] // bash, which execs sleep
	p.Cancel(w.ctx, p.id)
	cancelled(t, "the prompt whose command runs in the terminal", done)
	calls := strings.Join(p.TerminalCalls(), " ")
	if !strings.Contains(calls, "kill") || !strings.HasSuffix(calls, "release") {
		t.Errorf("terminal calls: %s", calls)
	}
	if alive(pid) {
		t.Errorf("the command (pid %d) survived the cancel", pid)
	}
}

// TestACPEOFEndsTerminal: the editor going away while bash runs in its
// terminal ends the turn; mm exits promptly (WaitExit's bound, and the
// cleanup) instead of waiting for the command.
func TestACPEOFEndsTerminal(t *testing.T) {
	t.Parallel()
	p := newWorld(t, "long_bash").session(inTerminal)
	p.async("Run the long job")
	p.WaitUpdates("the terminal in the tool call", showsTerminal)
	p.CloseInput()
	p.WaitExit() // promptly: not after the command
}

// TestACPTerminalTimeout: bash's timeout kills the command in the
// editor's terminal; the model gets its output and the timeout advice.
func TestACPTerminalTimeout(t *testing.T) {
	t.Parallel()
	p, result := runIt(t, "terminal_timeout", inTerminal)
	if !strings.Contains(result, "started") || !strings.Contains(result, "timed out after 1s") {
		t.Errorf("the model got %q", result)
	}
	if calls := strings.Join(p.TerminalCalls(), " "); calls != "create wait kill output release" {
		t.Errorf("terminal calls: %s", calls)
	}
}

// TestACPBashWithoutTerminal: without the capability no terminal/* call
// is made and bash runs locally, with the same text for the model.
func TestACPBashWithoutTerminal(t *testing.T) {
	t.Parallel()
	p, result := runIt(t, "terminal_bash", acptest.Options{})
	if !strings.Contains(result, "hello-from-terminal") || !strings.Contains(result, "[exit code: 3") {
		t.Errorf("the model got %q", result)
	}
	if calls := p.TerminalCalls(); len(calls) > 0 {
		t.Errorf("terminal/* called without the capability: %v", calls)
	}
}

// TestACPTerminalDropsSecrets: the editor's terminal has the editor's
// environment — here the test's, which mm, as an editor's child, shares;
// a variable whose name looks secret is unset before the command runs, an
// ordinary one is kept.
func TestACPTerminalDropsSecrets(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "terminal_env", "DEPLOY_TOKEN=tok-0123456789", "PLAIN_SETTING=visible")
	p := w.session(inTerminal)
	p.turn("print it")
	if calls := strings.Join(p.TerminalCalls(), " "); !strings.HasPrefix(calls, "create") {
		t.Fatalf("the command did not run in the terminal: %s", calls)
	}
	if result := lastToolResult(t, w.srv.Requests()); !strings.Contains(result, "token=[] plain=[visible]") {
		t.Errorf("the model got %q", result)
	}
}
