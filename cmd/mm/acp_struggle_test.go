package main

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestACPLoopNotes (issue 4): a looping model shows the ⚠ note, then the ✖
// note, as short italic paragraphs signed mm inside the agent message; the
// prompt fails with one line; the session still serves. Every message
// validates against the 2026-11 schema.
func TestACPLoopNotes(t *testing.T) {
	t.Parallel()
	p := newWorld(t, "loop_stuck").session()
	_, err := p.prompt("show missing.txt")
	if err == nil || !strings.Contains(err.Error(), "stuck") {
		t.Errorf("prompt error = %v, want the stuck line", err)
	}
	var re *sdk.RequestError
	if e, ok := err.(*sdk.RequestError); ok {
		re = e
	}
	if re == nil || strings.Contains(re.Message, "{") || !strings.Contains(re.Message, "rephrase") {
		t.Errorf("the error message is not one actionable line: %#v", err)
	}
	msg := p.answer()
	warn := strings.Index(msg, "_mm: ⚠ loop: bash ×3")
	stuck := strings.Index(msg, "_mm: ✖ stuck:")
	if warn < 0 || stuck < 0 || stuck < warn {
		t.Errorf("agent message lacks the ⚠ then ✖ notes:\n%s", msg)
	}
	if !strings.HasSuffix(strings.TrimSpace(msg), "_") {
		t.Errorf("notes are not italic paragraphs: %q", msg)
	}
	if _, err := p.prompt("are you there?"); err != nil {
		t.Fatalf("the session does not serve after a stuck turn: %v", err)
	}
}

// TestACPNoLoopAcrossPrompts (issue 9, defect 9): six separate prompts
// each read the same unchanged file once. Loop state is per turn: no loop
// warning, no stuck turn, every prompt ends normally, and the model is
// never told it is looping.
func TestACPNoLoopAcrossPrompts(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "same_read_six_prompts")
	w.write("notes.txt", "remember the milk\n")
	p := w.session()
	for i := range 6 {
		resp, err := p.prompt("what does notes.txt say?")
		if err != nil {
			t.Fatalf("prompt %d: %v", i+1, err)
		}
		if resp.StopReason != sdk.StopReasonEndTurn {
			t.Errorf("prompt %d: stop reason %q", i+1, resp.StopReason)
		}
	}
	if msg := p.answer(); strings.Contains(msg, "_mm:") {
		t.Errorf("a struggle note was shown:\n%s", msg)
	}
	for _, r := range w.srv.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "LOOP_DETECTED") {
				t.Fatalf("the model was told it loops: %q", m.Content)
			}
		}
	}
	if n := w.srv.Remaining(); n != 0 {
		t.Errorf("%d scenario steps unused", n)
	}
}
