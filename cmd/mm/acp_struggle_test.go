package main

import (
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPLoopNotes (issue 4): a looping model shows the ⚠ note, then the ✖
// note, as short italic paragraphs signed mm inside the agent message; the
// prompt fails with one line; the session still serves. Every message
// validates against the 2026-11 schema.
func TestACPLoopNotes(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "loop_stuck")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)
	_, err := p.prompt(ctx, id, "show missing.txt")
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
	updates, _ := p.client.snapshot()
	msg := messageText(updates)
	warn := strings.Index(msg, "_mm: ⚠ loop: bash ×3")
	stuck := strings.Index(msg, "_mm: ✖ stuck:")
	if warn < 0 || stuck < 0 || stuck < warn {
		t.Errorf("agent message lacks the ⚠ then ✖ notes:\n%s", msg)
	}
	if !strings.HasSuffix(strings.TrimSpace(msg), "_") {
		t.Errorf("notes are not italic paragraphs: %q", msg)
	}
	if _, err := p.prompt(ctx, id, "are you there?"); err != nil {
		t.Fatalf("the session does not serve after a stuck turn: %v", err)
	}
	checkSchema(t, p.sent.String(), p.stdout.String())
}

// TestACPNoLoopAcrossPrompts (issue 9, defect 9): six separate prompts
// each read the same unchanged file once. Loop state is per turn: no loop
// warning, no stuck turn, every prompt ends normally, and the model is
// never told it is looping.
func TestACPNoLoopAcrossPrompts(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "same_read_six_prompts")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "notes.txt"), "remember the milk\n")
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)
	for i := range 6 {
		resp, err := p.prompt(ctx, id, "what does notes.txt say?")
		if err != nil {
			t.Fatalf("prompt %d: %v", i+1, err)
		}
		if resp.StopReason != sdk.StopReasonEndTurn {
			t.Errorf("prompt %d: stop reason %q", i+1, resp.StopReason)
		}
	}
	updates, _ := p.client.snapshot()
	if msg := messageText(updates); strings.Contains(msg, "_mm:") {
		t.Errorf("a struggle note was shown:\n%s", msg)
	}
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "LOOP_DETECTED") {
				t.Fatalf("the model was told it loops: %q", m.Content)
			}
		}
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scenario steps unused", n)
	}
}
