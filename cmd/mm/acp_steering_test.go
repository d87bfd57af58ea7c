package main

import (
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

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
