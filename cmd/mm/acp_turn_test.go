package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
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
	// Reasoning is shown, never sent back: it never enters history.
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

// TestACPRefusedEditThenRepaired: a wrong `old` is refused with a repair
// text the model receives in its next request, the file is byte-identical
// after the refusal, and the repaired edit (typed with spaces in a
// tab-indented file) applies with its diff sent to the editor.
func TestACPRefusedEditThenRepaired(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "refused_edit")
	original := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello world\")\n}\n"
	file := w.write("greet.go", original)
	p := w.session()

	// Check the file right after the refused edit: hold the permission
	// answer of the second (valid) edit until we looked.
	release := p.Hold()
	done := p.async("Say bye instead of hello world")
	<-p.Asked() // the permission prompt of the repaired edit
	if got, _ := os.ReadFile(file); string(got) != original {
		t.Errorf("the refused edit changed the file: %q", got)
	}
	release()
	if a := acptest.Await(t, "the repaired edit", done); a.Err != nil {
		t.Fatal(a.Err)
	}

	reqs := w.srv.Requests()
	msgs := reqs[2].Messages
	repair := msgs[len(msgs)-1]
	if repair.Role != "tool" || !strings.Contains(repair.Content, "not found") || !strings.Contains(repair.Content, `fmt.Println("hello world")`) {
		t.Errorf("the model's next request lacks the repair text: %q", repair.Content)
	}
	want := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"bye world\")\n}\n"
	if got := readFile(t, file); got != want {
		t.Errorf("file = %q, want the tab-indented edit", got)
	}
	updates, perms := p.Updates(), p.Permissions()
	if len(perms) != 1 {
		t.Errorf("permission asked %d times, want once (the refused edit asks nothing)", len(perms))
	}
	var sawDiff bool
	for _, u := range updates {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted {
			for _, c := range u.ToolCallUpdate.Content {
				if c.Diff != nil && c.Diff.NewText == want {
					sawDiff = true
				}
			}
		}
	}
	if !sawDiff {
		t.Errorf("the editor did not get the applied diff:\n%s", strings.Join(acptest.Describe(updates), "\n"))
	}
}

// TestACPMentions: the context the user attaches is honoured. @path in
// the prompt text becomes an "[attached file: /abs/path]" line for the
// model; a missing file and a path outside the workspace are one line
// each, for the model and the user.
func TestACPMentions(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "short_answer")
	w.write("hello.txt", "hello\n")
	p := w.session()
	p.turn("summarize @hello.txt, @gone.txt and @/etc/hosts")
	user := w.srv.Requests()[0].Last().Content
	testenv.WantIn(t, "the model's prompt", user,
		"[attached file: "+filepath.Join(w.dir, "hello.txt")+"]",
		"[@gone.txt does not exist in the workspace — not attached]",
		"[@/etc/hosts is outside the workspace — not attached]",
	)
	if msg := p.answer(); !strings.Contains(msg, "@gone.txt does not exist") || !strings.Contains(msg, "@/etc/hosts is outside the workspace") {
		t.Errorf("the user was not told:\n%s", msg)
	}
}

// TestACPMentionUnsavedBuffer: an @-mention of a new file the editor
// holds only as an unsaved buffer is attached when the client reads files
// for mm — the model can then read it through fs/read_text_file — and
// reported missing when the client does not.
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

// TestACPPlan: a call of the plan tool (the model's todo list) reaches
// the editor as a plan update with the same entries, in order.
func TestACPPlan(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "plan")
	p := w.session()
	p.turn("fix the loop in main.go")
	updates := p.Updates()
	var plans []*sdk.SessionUpdatePlan
	for _, u := range updates {
		if u.Plan != nil {
			plans = append(plans, u.Plan)
		}
	}
	if len(plans) != 1 {
		t.Fatalf("got %d plan updates, want 1:\n%s", len(plans), strings.Join(acptest.Describe(updates), "\n"))
	}
	want := []sdk.PlanEntry{
		{Content: "read main.go", Status: sdk.PlanEntryStatusCompleted, Priority: sdk.PlanEntryPriorityMedium},
		{Content: "fix the loop", Status: sdk.PlanEntryStatusInProgress, Priority: sdk.PlanEntryPriorityMedium},
		{Content: "run the tests", Status: sdk.PlanEntryStatusPending, Priority: sdk.PlanEntryPriorityMedium},
	}
	got := plans[0].Entries
	if len(got) != len(want) {
		t.Fatalf("entries = %+v", got)
	}
	for i := range want {
		if got[i].Content != want[i].Content || got[i].Status != want[i].Status || got[i].Priority != want[i].Priority {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if r := lastMessage(w.srv); r.Role != "tool" || !strings.Contains(r.Content, "plan updated: 3 steps, 1 completed") {
		t.Errorf("the model got %q", r.Content)
	}
}

// TestACPLoopNotes: a looping model shows the ⚠ note, then the ✖ note, as
// short italic paragraphs signed mm inside the agent message; the prompt
// fails with one line; the session still serves. Every message validates
// against the ACP schema (the fake editor checks it).
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

// TestACPNoLoopAcrossPrompts: six separate prompts each read the same
// unchanged file once. Loop state is per turn: no loop warning, no stuck
// turn, every prompt ends normally, and the model is never told it is
// looping.
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

// TestACPSteering is steering as the leading adapters speak it, through
// the built binary: initialize advertises it; a correction sent while a
// long tool call runs is injected, the next model request — made only
// once the tool finished — carries it after the tool's result, the
// context meter counts it, the turn ends once, and session/load in
// another mm replays it in its place. With no turn running it answers
// promptRequired when the client asked for that (nothing starts), and
// otherwise starts a turn with it. A correction sent right behind its
// prompt steers that prompt's turn.
func TestACPSteering(t *testing.T) {
	t.Parallel()
	const wait = "until [ -f release ]; do sleep 0.05; done; echo released"
	srv := llmtest.NewServer(llmtest.Scenario{NCtx: 32768, Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "bash", Args: map[string]any{"command": wait}}}},
		{Content: "Using b, then."},
		{Content: "Started by steering."},
		{Content: "Read both."},
		{Content: "Read the second too."}, // when the correction came once the turn's first request was out
	}})
	w := newWorldOn(t, srv, "XDG_STATE_HOME="+t.TempDir())
	ctx := w.ctx
	p := w.start(acptest.Options{})
	init := p.Initialize(ctx)
	if st, _ := init.Meta["steering"].(map[string]any); st["supported"] != true {
		t.Errorf("initialize _meta = %v, want steering.supported true", init.Meta)
	}
	id := p.open()

	// A correction while the tool runs.
	answered := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, err := p.prompt("use a")
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		answered <- resp
	}()
	p.WaitUpdates("the tool call running", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool {
			return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusInProgress
		})
	})
	if got := p.Steer(ctx, id, "use b instead", nil); got.Outcome != "injected" {
		t.Fatalf("steering while the tool runs = %+v, want injected", got)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model requests while the tool still runs, want 1: the correction waits for the tool", n)
	}
	w.write("release", "")
	if resp := <-answered; resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stop reason = %s", resp.StopReason)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (the turn ends once, after the steered call)", len(reqs))
	}
	msgs := reqs[1].Messages
	if n := len(msgs); n < 2 || msgs[n-2].Role != "tool" || !strings.Contains(msgs[n-2].Content, "released") || msgs[n-1].Role != "user" || msgs[n-1].Content != "use b instead" {
		t.Errorf("the request after the tool ends with %+v, want the tool's result, then the correction", msgs[max(0, len(msgs)-2):])
	}
	used := 0
	for _, u := range p.Updates() {
		if u.UsageUpdate != nil {
			used = u.UsageUpdate.Used
		}
	}
	if used < reqs[1].PromptTokens {
		t.Errorf("context meter at %d after the steered call, whose prompt the server counted at %d tokens", used, reqs[1].PromptTokens)
	}

	// No turn running: the client's choice.
	if got := p.Steer(ctx, id, "and then?", map[string]any{"steering": map[string]any{"idleBehavior": "promptRequired"}}); got.Outcome != "promptRequired" || got.Reason != "noRunningTurn" {
		t.Errorf("steering an idle session that asked for promptRequired = %+v", got)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("promptRequired started a turn anyway (%d requests)", n)
	}
	if got := p.Steer(ctx, id, "start over", nil); got.Outcome != "startedNewTurn" {
		t.Errorf("steering an idle session = %+v, want startedNewTurn", got)
	}
	p.WaitMessage("Started by steering.")
	if last := srv.Requests()[2].Messages; last[len(last)-1].Content != "start over" {
		t.Errorf("the started turn's request ends with %+v", last[len(last)-1])
	}

	// Right behind its prompt, before the prompt's turn could begin.
	go func() {
		if _, err := p.prompt("read both"); err != nil {
			t.Errorf("prompt: %v", err)
		}
		answered <- sdk.PromptResponse{}
	}()
	p.Sent.WaitFor(t, `"read both"`)
	if got := p.Steer(ctx, id, "the second too", nil); got.Outcome != "injected" {
		t.Errorf("steering right behind a prompt = %+v, want injected into its turn", got)
	}
	<-answered
	// The correction goes before the turn's next model call: its first,
	// when mm read it before that call went out, else the one after the
	// first answer — which the turn then makes instead of ending.
	reqs = srv.Requests()
	switch len(reqs) {
	case 4:
		if m := reqs[3].Messages; m[len(m)-1].Content != "the second too" || !strings.HasSuffix(m[len(m)-2].Content, "read both") {
			t.Errorf("the turn's first request ends with %+v, want the prompt then the correction", m[len(m)-2:])
		}
	case 5:
		if m := reqs[4].Messages; m[len(m)-1].Content != "the second too" || m[len(m)-2].Content != "Read both." {
			t.Errorf("the turn's second request ends with %+v, want the first answer then the correction", m[len(m)-2:])
		}
	default:
		t.Fatalf("%d requests, want 4 or 5", len(reqs))
	}
	p.Stop()

	// The replay shows each correction as the user's, in its place.
	q := w.loadInNew(id)
	var seq []string
	for _, u := range q.Updates() {
		switch {
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			seq = append(seq, "user: "+u.UserMessageChunk.Content.Text.Text)
		case u.ToolCall != nil:
			seq = append(seq, "tool")
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			if n := len(seq); n == 0 || !strings.HasPrefix(seq[n-1], "agent: ") {
				seq = append(seq, "agent: ")
			}
			seq[len(seq)-1] += u.AgentMessageChunk.Content.Text.Text
		}
	}
	want := []string{"user: use a", "tool", "user: use b instead", "agent: Using b, then.", "user: start over", "agent: Started by steering.", "user: read both", "user: the second too", "agent: Read both."}
	if len(reqs) == 5 {
		want = append(want[:len(want)-2], "agent: Read both.", "user: the second too", "agent: Read the second too.")
	}
	if !slices.Equal(seq, want) {
		t.Errorf("replay:\n%s\nwant:\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
	q.Stop()
}
