package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// rawUpdate is one session/update mm wrote, decoded loosely.
type rawUpdate struct {
	Kind         string         `json:"sessionUpdate"`
	CompactionID string         `json:"compactionId"`
	Status       string         `json:"status"`
	Error        string         `json:"error"`
	Meta         map[string]any `json:"_meta"`
	Content      struct {
		Text string `json:"text"`
	} `json:"content"`
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Description string `json:"description"`
}

// reload checks what r's mm wrote against the schema and ends it, then
// loads session sid in a new mm, advertising caps.
func (w *world) reload(r *acptest.Wire, caps, sid string) *acptest.Wire {
	w.t.Helper()
	r.CheckSchema()
	if err := r.Close(); err != nil {
		w.t.Fatal(err)
	}
	q := w.wire()
	q.Initialize(caps)
	q.Load(w.dir, sid)
	return q
}

func rawUpdates(t *testing.T, stream string) []rawUpdate {
	var out []rawUpdate
	for _, m := range acptest.Messages(t, stream) {
		if m.Method != "session/update" {
			continue
		}
		var p struct {
			Update rawUpdate `json:"update"`
		}
		json.Unmarshal(m.Params, &p)
		out = append(out, p.Update)
	}
	return out
}

// compactionUpdates are the compaction updates among us, as
// "kind status" lines, and the ids they carry.
func compactionUpdates(us []rawUpdate) (seq []string, ids map[string]bool, summary string, meta map[string]any) {
	ids = map[string]bool{}
	for _, u := range us {
		switch u.Kind {
		case "compaction_update":
			seq = append(seq, u.Kind+" "+u.Status)
			ids[u.CompactionID] = true
			if u.Status == "completed" {
				meta = u.Meta
			}
		case "compaction_summary_chunk":
			seq = append(seq, u.Kind)
			ids[u.CompactionID] = true
			summary += u.Content.Text
		}
	}
	return seq, ids, summary, meta
}

// TestACPCompactionUpdates: with a client that advertises
// session.compaction, /compact is one compaction_update in_progress, the
// summary as compaction_summary_chunk, then compaction_update completed
// with the tokens before and after in _meta, under one id; session/load
// replays it in its place (after the /compact message). Every message
// validates against the 2026-11 schema. A client that does not advertise
// it (TestACPCompactCommand) sees no compaction update, only the reply.
func TestACPCompactionUpdates(t *testing.T) {
	t.Parallel()
	w := foxWorld(t, readTurns(4, 32768, llmtest.Step{Content: "after the compaction"}), 4, 3000, "XDG_STATE_HOME="+t.TempDir())
	const caps = `{"session":{"compaction":{}}}`
	r := w.wire()
	sid := r.HandshakeWith(w.dir, caps)
	for i := 1; i <= 4; i++ {
		r.Prompt(fmt.Sprintf("p%d", i), sid, fmt.Sprintf("What is in f%02d.txt?", i))
	}
	if seq, _, _, _ := compactionUpdates(rawUpdates(t, r.Lines())); len(seq) != 0 {
		t.Fatalf("compaction updates before any compaction: %v", seq)
	}
	r.Prompt("compact", sid, "/compact")
	seq, ids, summary, meta := compactionUpdates(rawUpdates(t, r.Lines()))
	want := []string{"compaction_update in_progress", "compaction_summary_chunk", "compaction_update completed"}
	if strings.Join(seq, ", ") != strings.Join(want, ", ") || len(ids) != 1 {
		t.Fatalf("compaction updates %v (ids %v), want %v under one id", seq, ids, want)
	}
	if !strings.Contains(summary, "each lists a fox's days") {
		t.Errorf("summary %q", summary)
	}
	mm, _ := meta["mm"].(map[string]any)
	before, _ := mm["tokensBefore"].(float64)
	after, _ := mm["tokensAfter"].(float64)
	if before <= after || after <= 0 {
		t.Errorf("_meta %v: want tokensBefore > tokensAfter > 0", meta)
	}
	q := w.reload(r, caps, sid)
	us := rawUpdates(t, q.Lines())
	seq2, ids2, summary2, _ := compactionUpdates(us)
	if strings.Join(seq2, ", ") != "compaction_summary_chunk, compaction_update completed" || fmt.Sprint(ids2) != fmt.Sprint(ids) || summary2 != summary {
		t.Errorf("replayed %v %v %q", seq2, ids2, summary2)
	}
	at, compactMsg := -1, -1
	for i, u := range us {
		if u.Kind == "compaction_summary_chunk" && at < 0 {
			at = i
		}
		if u.Kind == "user_message_chunk" && strings.Contains(u.Content.Text, "/compact") {
			compactMsg = i
		}
	}
	if compactMsg < 0 || at < compactMsg {
		t.Errorf("the compaction is not replayed after the /compact message (at %d, /compact at %d)", at, compactMsg)
	}
	q.CheckSchema()
}

// TestACPAutoCompactionUpdates: a compaction mm decides on its own —
// the conversation outgrew the window between turns — shows in a client
// that advertises session.compaction as it does for /compact:
// compaction_update in_progress, the summary as compaction_summary_chunk,
// then completed, under one id; the next request carries the summary.
// When the summary cannot be had (the model answers the summary request
// with a tool call), it is in_progress then failed with the reason, no
// summary, and the turn still answers. Every message validates against
// the 2026-11 schema.
func TestACPAutoCompactionUpdates(t *testing.T) {
	t.Parallel()
	// Each prompt is about 1,500 tokens: in an 8,192-token window, with
	// the last turn kept whole, the third one does not fit without the
	// first two summarised (there are no tool outputs to mask).
	long := func(i int) string {
		return strings.Repeat(fmt.Sprintf("Turn %d: the fox ran through the field and back home again. ", i), 100)
	}
	for _, c := range []struct {
		name    string
		summary llmtest.Step
		want    []string
	}{
		{"completed", llmtest.Step{Content: "- The user tells of a fox that runs through a field, turn after turn."},
			[]string{"compaction_update in_progress", "compaction_summary_chunk", "compaction_update completed"}},
		{"failed", llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": "f01.txt"}}}},
			[]string{"compaction_update in_progress", "compaction_update failed"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(llmtest.Scenario{NCtx: 8192, Loop: true, Steps: []llmtest.Step{{Content: "Noted."}},
				Replies: []llmtest.Reply{{When: "Write the updated notes now.", Step: c.summary}}})
			w := newWorldOn(t, srv, "XDG_STATE_HOME="+t.TempDir())
			w.config("context: {keepLastTurns: 1}\n")
			r := w.wire()
			sid := r.HandshakeWith(w.dir, `{"session":{"compaction":{}}}`)
			var seq []string
			for i := 1; i <= 4 && len(seq) == 0; i++ {
				r.Prompt(fmt.Sprintf("p%d", i), sid, long(i))
				seq, _, _, _ = compactionUpdates(rawUpdates(t, r.Lines()))
			}
			seq, ids, summary, meta := compactionUpdates(rawUpdates(t, r.Lines()))
			if strings.Join(seq, ", ") != strings.Join(c.want, ", ") || len(ids) != 1 {
				t.Fatalf("compaction updates %v (ids %v), want %v under one id", seq, ids, c.want)
			}
			last := srv.Requests()[len(srv.Requests())-1]
			if c.name == "completed" {
				mm, _ := meta["mm"].(map[string]any)
				if before, _ := mm["tokensBefore"].(float64); before <= 0 || !strings.Contains(summary, "a fox that runs") {
					t.Errorf("summary %q, _meta %v", summary, meta)
				}
				if !strings.Contains(last.Messages[1].Content, "a fox that runs") {
					t.Errorf("the next request does not carry the summary: %q", last.Messages[1].Content)
				}
			} else {
				var failed rawUpdate
				for _, u := range rawUpdates(t, r.Lines()) {
					if u.Kind == "compaction_update" && u.Status == "failed" {
						failed = u
					}
				}
				if !strings.Contains(failed.Error, "empty summary") || summary != "" {
					t.Errorf("failed compaction: error %q, summary %q", failed.Error, summary)
				}
			}
			r.CheckSchema()
		})
	}
}

// TestACPNotices: with a client that advertises session.notices, mm's
// ⚠ and ✖ notes are notices (warning, then error) with a short title and
// the note as description, and none is written into the answer; the
// failed turn still answers its one line. session/load does not replay
// them (notices are live, not history). Every message validates against
// the 2026-11 schema. A client that does not advertise it
// (TestACPLoopNotes) keeps the italic notes. The other kinds of note —
// the untrusted workspace config, the window the server does not say, a
// hook, an overflow mm recovered from — are checked both ways
// (noticeCases).
func TestACPNotices(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "loop_stuck", "XDG_STATE_HOME="+t.TempDir())
	w.config("yolo: true\n") // no permission question for the raw client to answer
	const caps = `{"session":{"notices":{}}}`
	r := w.wire()
	sid := r.HandshakeWith(w.dir, caps)
	if m := r.Call("p", "session/prompt", map[string]any{"sessionId": sid, "prompt": []map[string]any{{"type": "text", "text": "show missing.txt"}}}); m.Error == nil || !strings.Contains(m.Error.Message, "stuck") {
		t.Fatalf("the failed turn: %s", m.Line)
	}
	var notices []string
	for _, u := range rawUpdates(t, r.Lines()) {
		switch {
		case u.Kind == "notice":
			notices = append(notices, u.Severity+": "+u.Title+" — "+u.Description)
		case u.Kind == "agent_message_chunk" && strings.Contains(u.Content.Text, "_mm:"):
			t.Errorf("a note in the answer: %q", u.Content.Text)
		}
	}
	n := len(notices)
	if n < 2 || !strings.HasPrefix(notices[0], "warning: The model repeats itself — ") ||
		!strings.Contains(notices[0], "bash ×3") || !strings.HasPrefix(notices[n-1], "error: The model is stuck in a loop — ") {
		t.Errorf("notices %q", notices)
	}
	q := w.reload(r, caps, sid)
	for _, u := range rawUpdates(t, q.Lines()) {
		if u.Kind == "notice" || strings.Contains(u.Content.Text, "_mm:") {
			t.Errorf("session/load replayed a note: %+v", u)
		}
	}
	q.CheckSchema()

	for _, c := range noticeCases {
		t.Run(c.name, func(t *testing.T) {
			for _, caps := range []string{`{"session":{"notices":{}}}`, `{}`} {
				w := c.setup(t)
				r := w.wire()
				sid := r.HandshakeWith(w.dir, caps)
				var notices []string
				var italic string
				for i := 0; i < c.prompts; i++ {
					r.Prompt(fmt.Sprintf("p%d", i), sid, c.prompt)
					notices, italic = nil, ""
					for _, u := range rawUpdates(t, r.Lines()) {
						switch u.Kind {
						case "notice":
							notices = append(notices, u.Severity+": "+u.Title+" — "+u.Description)
						case "agent_message_chunk":
							italic += u.Content.Text
						}
					}
					if c.enough == nil || c.enough(notices, italic) {
						break
					}
				}
				if caps == `{}` {
					if len(notices) != 0 {
						t.Errorf("notices to a client that did not ask for them: %q", notices)
					}
					for _, w := range c.italic {
						if !strings.Contains(italic, w) {
							t.Errorf("without session.notices, no italic note %q in the answer:\n%s", w, italic)
						}
					}
				} else {
					if strings.Contains(italic, "_mm:") {
						t.Errorf("a note in the answer: %q", italic)
					}
					for _, w := range c.notices {
						if !slices.ContainsFunc(notices, func(n string) bool { return strings.HasPrefix(n, w) }) {
							t.Errorf("no notice %q among %q", w, notices)
						}
					}
				}
				r.CheckSchema()
				if err := r.Close(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// noticeCases are the notes TestACPNotices checks both ways: as notices
// (their severity, title and the start of their description) to a client
// that advertised session.notices, as today's italic notes to one that
// did not.
var noticeCases = []struct {
	name  string
	setup func(t *testing.T) *world
	// prompt is sent up to prompts times, until enough holds: the window
	// probe runs in the background, and its note comes with the first
	// answer after it ended.
	prompt  string
	prompts int
	enough  func(notices []string, italic string) bool
	notices []string
	italic  []string
}{
	{
		// An untrusted workspace config: its own notice, not an MCP
		// server's, and no ⚠ in the text (the severity says it). The
		// server (behind provider openai, no /props) does not say its
		// window: a warning, with the fix.
		name: "trust and window unknown",
		setup: func(t *testing.T) *world {
			w := newWorldOn(t, llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{{Content: "hello"}}}), "MM_PROVIDER=openai", "XDG_STATE_HOME="+t.TempDir())
			w.write(".mm/agent.yaml", "yolo: true\n")
			return w
		},
		prompt: "hi", prompts: 4,
		enough: func(notices []string, italic string) bool {
			return strings.Contains(strings.Join(notices, "\n")+italic, "context window unknown")
		},
		notices: []string{
			"warning: Workspace config not trusted — .mm/agent.yaml is not trusted: yolo ignored — run `mm trust` here",
			"warning: Context window — context window unknown: the server does not say it — set contextWindow in the config",
		},
		italic: []string{
			"_mm: ⚠ .mm/agent.yaml is not trusted: yolo ignored",
			"_mm: ⚠ context window unknown: the server does not say it",
		},
	},
	{
		// A hook that denies a command.
		name: "hook",
		setup: func(t *testing.T) *world {
			return hookWorld(t, "hook_deny_rm", "  preToolUse:\n    - {command: [./.mm/no-rm.sh], tools: [bash]}\n", map[string]string{"hello.txt": "hello\n"})
		},
		prompt: "delete hello.txt", prompts: 1,
		notices: []string{"warning: Hook — a hook denied bash: deleting files is forbidden"},
		italic:  []string{"_mm: ⚠ a hook denied bash: deleting files is forbidden"},
	},
	{
		// A configured window larger than the server's: the refused
		// request was shrunk and sent again, the turn went on — mm did
		// it on its own and it worked, so it is news (info).
		name: "overflow recovered",
		setup: func(t *testing.T) *world {
			w := foxWorld(t, readTurns(1, 4096), 1, 14000, "XDG_STATE_HOME="+t.TempDir())
			w.config("contextWindow: 32768\n")
			return w
		},
		prompt: "What is in f01.txt?", prompts: 1,
		notices: []string{"info: Context window — context overflow: the server's window is 4,096 tokens (not 32,768)"},
		italic:  []string{"_mm: ⚠ context overflow: the server's window is 4,096 tokens (not 32,768)"},
	},
}
