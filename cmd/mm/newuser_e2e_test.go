package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/permit"
)

// TestLineResumeKeepsMode: a session the user put in plan mode in the
// editor stays in plan mode when continued with mm -p --resume: the
// model is told, and its write is refused even with --yes.
func TestLineResumeKeepsMode(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "resume_plan", "XDG_STATE_HOME="+t.TempDir())
	p := w.session()
	if _, err := p.Conn.SetSessionMode(w.ctx, sdk.SetSessionModeRequest{SessionId: p.id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	p.CloseInput()
	p.WaitExit()

	w.lineOK("", "--yes", "-p", "--resume", string(p.id), "create plan.txt")
	if _, err := os.Stat(filepath.Join(w.dir, "plan.txt")); !os.IsNotExist(err) {
		t.Errorf("plan.txt was written in plan mode (stat: %v)", err)
	}
	reqs := w.srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	last := reqs[0].Last()
	if !strings.Contains(last.Content, permit.PlanNote) {
		t.Errorf("the model was not told it is in plan mode: %q", last.Content)
	}
}
