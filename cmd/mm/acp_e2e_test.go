package main

import (
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
)

// TestACPReadEditAnswer drives the real mm binary with the acp-go-sdk
// client over stdio: the scripted model reasons, reads a file, edits it
// (after a permission prompt) and answers.
func TestACPReadEditAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "read_edit_answer")
	file := w.write("hello.txt", "hello world\nsecond line\n")
	p := w.session()
	// The window is probed in the background and a turn never waits for
	// it; a usage_update needs the window's size, so a turn that beats
	// the probe (a loaded machine, a fast build) has none to send.
	waitLogged(t, w.ctx, w.env, `msg="context window"`)
	p.endTurn("Change hello to goodbye in hello.txt")
	if got := readFile(t, file); got != "goodbye world\nsecond line\n" {
		t.Errorf("file = %q", got)
	}

	updates, perms := p.Updates(), p.Permissions()
	lines := acptest.Describe(updates)
	t.Logf("updates:\n%s", strings.Join(lines, "\n"))

	// Order: thought, read call pending→completed, thought, edit call
	// pending→(permission)→in_progress→completed with a diff, answer.
	want := []string{
		"thought: ",
		`tool_call call_1 read pending "Read hello.txt"`,
		"tool_call_update call_1 completed text",
		"thought: ",
		`tool_call call_2 edit pending "Edit hello.txt"`,
		"tool_call_update call_2 in_progress",
		"tool_call_update call_2 completed diff:hello.txt text",
		"message: ",
	}
	i := 0
	for _, l := range lines {
		if i < len(want) && strings.HasPrefix(l, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("update order: matched %d of %d, missing %q", i, len(want), want[i])
	}
	if got := acptest.MessageText(updates); !strings.Contains(got, "Done: hello.txt now says goodbye world.") {
		t.Errorf("answer = %q", got)
	}
	if thoughts := acptest.ThoughtText(updates); !strings.Contains(thoughts, "I should read the file first.") {
		t.Errorf("thoughts = %q", thoughts)
	}

	// The diff carries the old and new text.
	var diff *sdk.ToolCallContentDiff
	for _, u := range updates {
		if u.ToolCallUpdate != nil {
			for _, c := range u.ToolCallUpdate.Content {
				if c.Diff != nil {
					diff = c.Diff
				}
			}
		}
	}
	if diff == nil || diff.OldText == nil || *diff.OldText != "hello world\nsecond line\n" || diff.NewText != "goodbye world\nsecond line\n" || diff.Path != file {
		t.Errorf("diff = %+v", diff)
	}

	// One permission request, for the edit, with the four option kinds.
	if len(perms) != 1 {
		t.Fatalf("permission requests = %d, want 1 (the edit)", len(perms))
	}
	if perms[0].ToolCall.ToolCallId != "call_2" {
		t.Errorf("permission asked for %q, want the edit call", perms[0].ToolCall.ToolCallId)
	}
	var kinds []string
	for _, o := range perms[0].Options {
		kinds = append(kinds, string(o.Kind))
	}
	for _, k := range []string{"allow_once", "allow_always", "reject_once", "reject_always"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("permission options %v lack %s", kinds, k)
		}
	}

	// The second model request carries the read's result.
	reqs := w.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d, want 3", len(reqs))
	}
	second := reqs[1].Messages
	last := second[len(second)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, "hello world") {
		t.Errorf("second request ends with %+v, want the read_file result", last)
	}
	if !reqs[0].IncludeUsage {
		t.Errorf("stream_options.include_usage not requested")
	}
	// Reasoning never enters history (E7).
	for _, m := range reqs[2].Messages {
		if m.ReasoningContent != "" || m.Reasoning != "" || strings.Contains(m.Content, "I should read the file first") {
			t.Errorf("reasoning sent back in history: %+v", m)
		}
	}
	// usage_update after each model call, with the window from /props.
	n := 0
	for _, u := range updates {
		if u.UsageUpdate != nil {
			n++
			if u.UsageUpdate.Size != 32768 || u.UsageUpdate.Used <= 0 {
				t.Errorf("usage_update = %+v", u.UsageUpdate)
			}
		}
	}
	if n != 3 {
		t.Errorf("usage updates = %d, want 3 (one per model call)", n)
	}
}
