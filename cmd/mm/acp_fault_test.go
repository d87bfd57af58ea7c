package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
)

// oneLine checks a failed prompt answers the JSON-RPC error whose message
// is one actionable line: no JSON, no stack, no newline.
func oneLine(t *testing.T, err error) string {
	t.Helper()
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("prompt error = %v, want the one-line JSON-RPC error", err)
	}
	if re.Message == "" || strings.ContainsAny(re.Message, "{\n") || strings.Contains(re.Message, "goroutine") {
		t.Errorf("the error is not one actionable line: %q", re.Message)
	}
	return re.Message
}

// TestFaultServerKilledMidStream: the model server dies while it streams
// (its connections cut, nothing listening after). The prompt ends with one
// line after the retries, the words already streamed were delivered,
// stdout carries only JSON-RPC, and mm exits cleanly afterwards.
func TestFaultServerKilledMidStream(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "stall_mid_answer")
	p := w.session()
	done := p.stalling("Explain everything", 0, "Here is the")
	w.srv.Close()
	r := acptest.Await(t, "the prompt whose server died", done)
	if r.Err == nil {
		t.Fatalf("prompt = %+v; want a failed turn", r.Resp)
	}
	line := oneLine(t, r.Err)
	t.Logf("the user read: %s", line)
	for _, l := range strings.Split(strings.TrimSpace(p.Received.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("stdout carried a non-JSON line: %q", l)
		}
	}
}

// TestFault5xxStorm: every try of a call answers 503; mm retries a bounded
// number of times, then ends the turn with one line, and the session
// serves the next prompt once the server is back.
func TestFault5xxStorm(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "storm_503")
	p := w.session()
	_, err := p.prompt("hello?")
	line := oneLine(t, err)
	if !strings.Contains(strings.ToLower(line), "load") && !strings.Contains(line, "503") {
		t.Errorf("the line does not say what the server answered: %q", line)
	}
	if n := len(w.srv.Requests()); n != 4 {
		t.Errorf("model requests = %d, want 4 (the call and three retries)", n)
	}
	p.endTurn("and now?")
	if !strings.Contains(p.answer(), "Recovered and answering.") {
		t.Errorf("the answer after the storm was not shown: %q", p.answer())
	}
}

// TestFaultSlowDrip: a server that sends a word every 500 ms for 5 s, with
// the idle watchdog at 3 s: the watchdog measures the gaps, not the whole
// answer, so the answer arrives whole and in order.
func TestFaultSlowDrip(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "slow_drip")
	w.config("watchdogTimeout: 3s\n")
	p := w.session()
	p.endTurn("count to ten, slowly")
	if got := p.answer(); got != "one two three four five six seven eight nine ten" {
		t.Errorf("shown %q", got)
	}
}

// TestFaultEOFMidTurn: the editor goes away while the permission prompt
// of an edit is open. mm exits 0, the file is byte-identical, the stored
// session is valid JSON holding the prompt, and nothing of mm's process
// group is left.
func TestFaultEOFMidTurn(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	w := newWorld(t, "read_edit_answer", "XDG_STATE_HOME="+state)
	original := "hello world\r\nsecond line\n"
	file := w.write("hello.txt", original)
	p := w.start(acptest.Options{})
	p.Hold() // the user never answers
	p.open()
	p.async("change hello to goodbye")
	waitSignal(t, "the permission prompt", p.Asked())
	p.Stop()
	if got := readFile(t, file); got != original {
		t.Errorf("the file changed: %q", got)
	}
	if err := syscall.Kill(-p.Cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("mm's process group is still alive after it exited (kill -0: %v)", err)
	}
	sessions, _ := filepath.Glob(filepath.Join(state, "mm", "sessions", "*", "*.json"))
	if len(sessions) != 1 {
		t.Fatalf("stored sessions = %v, want one", sessions)
	}
	b, err := os.ReadFile(sessions[0])
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) || !strings.Contains(string(b), "change hello to goodbye") {
		t.Errorf("the stored session is not whole:\n%s", b)
	}
	leftovers, _ := filepath.Glob(filepath.Join(w.dir, "*"))
	if len(leftovers) != 1 {
		t.Errorf("the workspace holds more than the file (a temp file of an interrupted write?): %v", leftovers)
	}
}
