package main

import (
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPMentions (E31, A11): @path in the prompt text becomes an
// "[attached file: /abs/path]" line for the model; a missing file and a
// path outside the workspace are one line each, for the model and the
// user.
func TestACPMentions(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "short_answer")
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hello.txt"), "hello\n")
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testenv.Context(t)
	id := p.session(t, ctx, dir)
	if _, err := p.prompt(ctx, id, "summarize @hello.txt, @gone.txt and @/etc/hosts"); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Requests()[0].Messages
	user := msgs[len(msgs)-1].Content
	for _, want := range []string{
		"[attached file: " + filepath.Join(dir, "hello.txt") + "]",
		"[@gone.txt does not exist in the workspace — not attached]",
		"[@/etc/hosts is outside the workspace — not attached]",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("the model's prompt lacks %q:\n%s", want, user)
		}
	}
	updates, _ := p.client.snapshot()
	if msg := messageText(updates); !strings.Contains(msg, "@gone.txt does not exist") || !strings.Contains(msg, "@/etc/hosts is outside the workspace") {
		t.Errorf("the user was not told:\n%s", msg)
	}
}

// TestACPMentionUnsavedBuffer (A8, E31): a new file the editor holds only
// as an unsaved buffer is attached when the client reads files for mm —
// the model can then read it through fs/read_text_file — and reported
// missing when the client does not.
func TestACPMentionUnsavedBuffer(t *testing.T) {
	t.Parallel()
	for _, viaEditor := range []bool{true, false} {
		srv := scenario(t, "short_answer")
		dir := t.TempDir()
		draft := filepath.Join(dir, "draft.md")
		p := startAgent(t, dir, mmEnv(t, srv))
		p.client.buffers = map[string]string{draft: "# draft\n"}
		ctx := testenv.Context(t)
		caps := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: viaEditor, WriteTextFile: viaEditor}}
		id := p.sessionWith(t, ctx, dir, caps, nil)
		if _, err := p.prompt(ctx, id, "tidy @draft.md"); err != nil {
			t.Fatal(err)
		}
		msgs := srv.Requests()[0].Messages
		user := msgs[len(msgs)-1].Content
		want := "[attached file: " + draft + "]"
		if !viaEditor {
			want = "[@draft.md does not exist in the workspace — not attached]"
		}
		if !strings.Contains(user, want) {
			t.Errorf("editor reads=%v: the model's prompt lacks %q:\n%s", viaEditor, want, user)
		}
	}
}
