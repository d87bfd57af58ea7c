package main

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestACPLoopNotes (issue 4): a looping model shows the ⚠ note, then the ✖
// note, as short italic paragraphs signed mm inside the agent message; the
// prompt fails with one line; the session still serves.
func TestACPLoopNotes(t *testing.T) {
	srv := scenario(t, "loop_stuck")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testContext(t)
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
}
