package main

import (
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestACPUserEditDuringPromptIsKept (issue 9, defect 1): the user edits
// the file while the editor shows the permission prompt of the model's
// edit, then allows it. mm reads the file again before writing, keeps the
// user's text byte for byte, and tells the model the file changed.
func TestACPUserEditDuringPromptIsKept(t *testing.T) {
	srv := scenario(t, "user_edit_during_prompt")
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	writeFile(t, file, "hello world\n")
	mine := "hello world, said the user\n"

	p := startAgent(t, dir, mmEnv(t, srv))
	p.client.onAsk = func(sdk.RequestPermissionRequest) { writeFile(t, file, mine) }
	ctx := testContext(t)
	id := p.session(t, ctx, dir)
	if _, err := p.prompt(ctx, id, "Say goodbye in hello.txt"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, file); got != mine {
		t.Errorf("the user's edit was overwritten: %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	msgs := reqs[2].Messages
	if last := msgs[len(msgs)-1]; last.Role != "tool" || !strings.Contains(last.Content, "hello.txt changed since you read it") {
		t.Errorf("the model was not told the file changed: %q", last.Content)
	}
	_, perms := p.client.snapshot()
	if len(perms) != 1 {
		t.Errorf("permission asked %d times, want 1", len(perms))
	}
}
