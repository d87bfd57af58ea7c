package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/permit"
)

// TestLineResumeKeepsMode: a session the user put in plan mode in the
// editor stays in plan mode when continued with mm -p --resume: the
// model is told, and its write is refused even with --yes.
func TestLineResumeKeepsMode(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "resume_plan")
	dir := t.TempDir()
	env := mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir())
	ctx := testenv.Context(t)
	p := startAgent(t, dir, env)
	id := p.session(t, ctx, dir)
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	p.stdin.Close()
	<-p.done
	p.done <- nil // for the cleanup

	_, stderr, code := runInProcess(t, dir, env, "", "--yes", "-p", "--resume", string(id), "create plan.txt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "plan.txt")); !os.IsNotExist(err) {
		t.Errorf("plan.txt was written in plan mode (stat: %v)", err)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	last := reqs[0].Messages[len(reqs[0].Messages)-1]
	if !strings.Contains(last.Content, permit.PlanNote) {
		t.Errorf("the model was not told it is in plan mode: %q", last.Content)
	}
}
