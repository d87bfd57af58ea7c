package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// fourTurns plays four turns that each read a file, then returns the
// session; the summary is answered by reply (or fails as it says).
func fourTurns(t *testing.T, reply llmtest.Step) (*engine.Session, *llmtest.Server) {
	t.Helper()
	o := longOpts{turns: 4, fileSize: 3000, nCtx: 32768}
	sc := longScenario(o)
	sc.Replies[0].Step = reply
	sc.Steps = append(sc.Steps, llmtest.Step{Content: "the answer after compaction"})
	res := runLongSessionWith(t, o, sc)
	if res.answered != 4 {
		t.Fatalf("answered %d of 4", res.answered)
	}
	return res.session, res.srv
}

// /compact after four turns: one summary call, a reply with the numbers,
// the next request smaller and carrying the summary, the last turn intact.
func TestCompactCommand(t *testing.T) {
	s, srv := fourTurns(t, llmtest.Step{Content: "- read f01..f03, each about a fox"})
	before := len(srv.Requests())
	var text strings.Builder
	var usage []engine.Usage
	end := s.Run(context.Background(), "/compact", func(e engine.Event) {
		switch e := e.(type) {
		case engine.Text:
			text.WriteString(e.Text)
		case engine.Usage:
			usage = append(usage, e)
		}
	})
	if end.Reason != engine.EndTurn {
		t.Fatalf("/compact ended %+v", end)
	}
	reqs := srv.Requests()[before:]
	if len(reqs) != 1 || reqs[0].Step != -1 || len(reqs[0].Tools) != 0 {
		t.Fatalf("/compact made %d requests (want one summary call without tools)", len(reqs))
	}
	var kw map[string]any
	if !reqs[0].Field("chat_template_kwargs", &kw) || kw["enable_thinking"] != false {
		t.Errorf("summary call does not turn thinking off: %v", kw)
	}
	var mt int
	if reqs[0].Field("max_tokens", &mt); mt != 800 {
		t.Errorf("summary max_tokens = %d, want summaryMaxTokens 800", mt)
	}
	var b, a int
	if _, err := fmt.Sscanf(strings.ReplaceAll(text.String(), ",", ""), "compacted: %d → %d tokens", &b, &a); err != nil || a >= b {
		t.Fatalf("reply %q: want 'compacted: N → M tokens' with M < N", text.String())
	}
	if len(usage) != 1 || usage[0].Size != 32768 || usage[0].Used != a {
		t.Errorf("usage after compaction = %+v", usage)
	}
	h := s.History()
	if !strings.Contains(h[0].Content, "- read f01..f03, each about a fox") || !strings.Contains(h[0].Content, "What is in f04.txt?") {
		t.Fatalf("the summary does not head the kept turn: %q", h[0].Content)
	}
	if n := len(h); n != 4 {
		t.Fatalf("history after /compact has %d messages, want the last turn's 4", n)
	}
	// The next turn's request is smaller and carries the summary.
	prevBig := srv.Requests()[before-1].PromptTokens
	if end := s.Run(context.Background(), "and now?", func(engine.Event) {}); end.Reason != engine.EndTurn {
		t.Fatalf("turn after /compact: %+v", end)
	}
	next := srv.Requests()[len(srv.Requests())-1]
	if next.PromptTokens >= prevBig || !strings.Contains(next.Messages[1].Content, "each about a fox") {
		t.Fatalf("next request %d tokens (before %d), first message %q", next.PromptTokens, prevBig, next.Messages[1].Content)
	}
}

// A summary call that fails or returns nothing keeps the history exactly
// as it was and says so in one line (nothing lost).
func TestCompactFailureKeepsHistory(t *testing.T) {
	for name, reply := range map[string]llmtest.Step{
		"server error": {HTTPError: &llmtest.HTTPError{Status: 500, Body: `{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}`}},
		"empty":        {Content: "<think>nothing to say</think>"},
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := fourTurns(t, reply)
			was := s.History()
			var text strings.Builder
			var warned int
			s.Run(context.Background(), "/compact", func(e engine.Event) {
				switch e := e.(type) {
				case engine.Text:
					text.WriteString(e.Text)
				case engine.Struggle:
					warned++
				}
			})
			if !reflect.DeepEqual(s.History(), was) {
				t.Fatal("a failed compaction changed the history")
			}
			if got := text.String(); !strings.HasPrefix(got, "compaction failed: ") || !strings.HasSuffix(got, "the conversation is kept as it was") || strings.Contains(got, "\n") {
				t.Fatalf("reply %q: want one line saying it failed and nothing changed", got)
			}
			if warned != 1 {
				t.Fatalf("%d struggle notes, want 1", warned)
			}
		})
	}
}

// /compact with nothing to compact says so and asks nothing.
func TestCompactNothingYet(t *testing.T) {
	s, srv := newSession(t, script(), nil)
	var text strings.Builder
	s.Run(context.Background(), " /compact ", func(e engine.Event) {
		if tx, ok := e.(engine.Text); ok {
			text.WriteString(tx.Text)
		}
	})
	if len(srv.Requests()) != 0 || !strings.Contains(text.String(), "nothing to compact yet") {
		t.Fatalf("requests %d, reply %q", len(srv.Requests()), text.String())
	}
}

// A window smaller than the fixed prompt is one line, before any request.
func TestWindowSmallerThanFixedPrompt(t *testing.T) {
	s, srv := newSession(t, script(llmtest.Step{Content: "never"}), func(o *engine.Options) {
		o.ContextWindow = func(context.Context) int { return 256 }
	})
	var r recorder
	end := s.Run(context.Background(), "hello", r.emit)
	if end.Reason != engine.Failed || !strings.Contains(end.Err, "context window (256 tokens) is too small") || strings.Contains(end.Err, "\n") {
		t.Fatalf("end = %+v", end)
	}
	if len(srv.Requests()) != 0 {
		t.Fatalf("%d requests sent into a window that cannot hold the prompt", len(srv.Requests()))
	}
}

// A second compaction merges the previous summary (sent as the notes so
// far), it does not summarise the summary as if it were a turn.
func TestCompactMergesPreviousSummary(t *testing.T) {
	// The script has five read turns; the session plays three, then the
	// test plays the last two itself between the two compactions (f04 and
	// f05 do not exist: the model is told so, which is fine here).
	sc := longScenario(longOpts{turns: 5, nCtx: 32768})
	sc.Replies = []llmtest.Reply{
		{When: summaryAsk, Times: 1, Step: llmtest.Step{Content: "- FIRST NOTES"}},
		{When: summaryAsk, Step: llmtest.Step{Content: "- FIRST NOTES\n- SECOND NOTES"}},
	}
	res := runLongSessionWith(t, longOpts{turns: 3, fileSize: 2000, nCtx: 32768}, sc)
	s, srv := res.session, res.srv
	ctx := context.Background()
	if end := s.Run(ctx, "/compact", func(engine.Event) {}); end.Reason != engine.EndTurn {
		t.Fatal(end)
	}
	for i := 4; i <= 5; i++ {
		if end := s.Run(ctx, fmt.Sprintf("What is in f%02d.txt?", i), func(engine.Event) {}); end.Reason != engine.EndTurn {
			t.Fatalf("turn %d: %+v", i, end)
		}
	}
	if end := s.Run(ctx, "/compact", func(engine.Event) {}); end.Reason != engine.EndTurn {
		t.Fatal(end)
	}
	var asks []string
	for _, r := range srv.Requests() {
		if r.Step == -1 && !r.Refused {
			asks = append(asks, r.Last().Content)
		}
	}
	if len(asks) != 2 {
		t.Fatalf("%d summary calls, want 2", len(asks))
	}
	if strings.Contains(asks[0], "Notes so far") || !strings.Contains(asks[1], "Notes so far") || !strings.Contains(asks[1], "- FIRST NOTES") {
		t.Fatalf("second summary request does not merge the first:\n%s", asks[1])
	}
	if strings.Contains(asks[1], "USER: [Summary of the earlier conversation") || strings.Count(asks[1], "FIRST NOTES") != 1 {
		t.Fatalf("the previous summary was re-summarised as a turn:\n%s", asks[1])
	}
	h := s.History()
	if !strings.Contains(h[0].Content, "SECOND NOTES") || strings.Count(h[0].Content, "[Summary of the earlier conversation") != 1 {
		t.Fatalf("head after two compactions: %q", h[0].Content)
	}
}
