package main

import (
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
)

// TestACPMentions (E31, A11): @path in the prompt text becomes an
// "[attached file: /abs/path]" line for the model; a missing file and a
// path outside the workspace are one line each, for the model and the
// user.
func TestACPMentions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "short_answer")
	w.write("hello.txt", "hello\n")
	p := w.session()
	p.turn("summarize @hello.txt, @gone.txt and @/etc/hosts")
	user := w.srv.Requests()[0].Last().Content
	for _, want := range []string{
		"[attached file: " + filepath.Join(w.dir, "hello.txt") + "]",
		"[@gone.txt does not exist in the workspace — not attached]",
		"[@/etc/hosts is outside the workspace — not attached]",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("the model's prompt lacks %q:\n%s", want, user)
		}
	}
	if msg := p.answer(); !strings.Contains(msg, "@gone.txt does not exist") || !strings.Contains(msg, "@/etc/hosts is outside the workspace") {
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
		w := newWorld(t, "short_answer")
		draft := filepath.Join(w.dir, "draft.md")
		caps := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: viaEditor, WriteTextFile: viaEditor}}
		p := w.serve(acptest.Options{Caps: caps})
		p.SetBuffer(draft, "# draft\n")
		p.open()
		p.turn("tidy @draft.md")
		user := w.srv.Requests()[0].Last().Content
		want := "[attached file: " + draft + "]"
		if !viaEditor {
			want = "[@draft.md does not exist in the workspace — not attached]"
		}
		if !strings.Contains(user, want) {
			t.Errorf("editor reads=%v: the model's prompt lacks %q:\n%s", viaEditor, want, user)
		}
	}
}
