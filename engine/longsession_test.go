package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/files"
)

// summaryAsk is the end of mm's summary request: the scripted model
// answers it whenever it comes (llmtest replies).
const summaryAsk = "Write the updated notes now."

// longOpts describe a long session: turns that each read one file of
// fileSize bytes, against a llama.cpp-like server holding nCtx tokens.
type longOpts struct {
	turns, fileSize, nCtx int
	// configured is the window mm is told (0: probed from /props).
	configured int
	everyTurn  bool
	keep       int
	// unknown: a generic OpenAI API that says nothing of its window.
	unknown bool
	// stored: the session has a store (and so keeps masked outputs on
	// disk).
	stored bool
}

// longResult is what the long session measured, from what the server
// received.
type longResult struct {
	answered, failed, refused int
	biggest                   int // prompt tokens of the biggest request
	breaks                    int // requests whose messages do not extend the previous ones
	steps                     int // ContextStep events
	reprefill                 int // tokens the server had to read again (prompt - shared prefix), summed
	requests                  int
	summaries                 int
	srv                       *llmtest.Server
	session                   *engine.Session
	events                    []engine.Event
	stepAt                    map[int]bool // chat request indexes (0-based) that came right after a step
	perTurn                   []int        // model requests (chat and summary) each turn made
	storeDir                  string       // the store's directory, when stored
}

// fileText is a deterministic text file of about n bytes: numbered lines
// of prose, like a source or log file.
func fileText(id, n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%03d line %d of file %02d: the quick brown fox jumps over the lazy dog, again and again.\n", i, i, id)
	}
	return b.String()
}

func longScenario(o longOpts) llmtest.Scenario {
	var steps []llmtest.Step
	for i := 1; i <= o.turns; i++ {
		steps = append(steps,
			llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": fmt.Sprintf("f%02d.txt", i)}}}},
			llmtest.Step{Content: fmt.Sprintf("f%02d.txt holds numbered lines about a fox.", i)},
		)
	}
	return llmtest.Scenario{NCtx: o.nCtx, Steps: steps, Replies: []llmtest.Reply{{When: summaryAsk, Step: llmtest.Step{
		Content: "- The user asks about files f01.txt onwards, one per turn; each holds numbered lines about a fox.\n- Nothing was changed."}}}}
}

func runLongSession(tb testing.TB, o longOpts) longResult {
	tb.Helper()
	return runLongSessionWith(tb, o, longScenario(o))
}

func runLongSessionWith(tb testing.TB, o longOpts, sc llmtest.Scenario) longResult {
	tb.Helper()
	dir := tb.TempDir()
	for i := 1; i <= o.turns; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), []byte(fileText(i, o.fileSize)), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	srv := llmtest.NewServer(sc)
	tb.Cleanup(srv.Close)
	provider := llm.ProviderLlamaCpp
	if o.unknown {
		provider = llm.ProviderOpenAI
	}
	conn := llm.NewConnector(llm.ConnectorOptions{Provider: provider, BaseURL: srv.URL(), Model: "fake-model",
		ContextWindow: o.configured, RetryDelays: []time.Duration{}})
	tb.Cleanup(conn.Close)
	if o.configured == 0 {
		conn.Warm()
		<-conn.Probed()
	}
	var st *store.Store
	storeDir := ""
	if o.stored {
		storeDir = tb.TempDir()
		st = store.Open(storeDir, nil)
	}
	s := engine.NewSession(engine.Options{
		Store:         st,
		ID:            store.NewID(),
		Model:         conn,
		ModelName:     "fake-model",
		Tools:         tools.NewRegistry(files.New(files.Options{MaxTokens: 4096})...),
		Env:           diskEnv(tb, dir, nil),
		Sampling:      llm.Sampling{MaxTokens: 4096},
		ContextWindow: func(context.Context) int { n, _ := conn.Window(); return n },
		LearnWindow:   conn.Learn,
		Context:       engine.ContextOptions{MaskEveryTurn: o.everyTurn, KeepLastTurns: o.keep},
	})
	var res longResult
	res.srv, res.session, res.stepAt, res.storeDir = srv, s, map[int]bool{}, storeDir
	ctx := context.Background()
	for i := 1; i <= o.turns; i++ {
		sent := len(srv.Requests())
		end := s.Run(ctx, fmt.Sprintf("What is in f%02d.txt?", i), func(e engine.Event) {
			res.events = append(res.events, e)
			if _, ok := e.(engine.ContextStep); ok {
				res.steps++
				res.stepAt[chatRequests(srv)] = true
			}
		})
		res.perTurn = append(res.perTurn, len(srv.Requests())-sent)
		if end.Reason == engine.EndTurn {
			res.answered++
		} else {
			res.failed++
			tb.Logf("turn %d: %s %s", i, end.Reason, end.Err)
		}
	}
	var prev *llmtest.Recorded
	var prevRendered []byte
	for _, r := range srv.Requests() {
		res.requests++
		if r.Refused {
			res.refused++
			continue
		}
		res.biggest = max(res.biggest, r.PromptTokens)
		rendered := renderPrompt(tb, r)
		res.reprefill += r.PromptTokens - commonLen(prevRendered, rendered)/4
		prevRendered = rendered
		if r.Step == -1 {
			res.summaries++
			continue
		}
		if prev != nil && !extends(tb, *prev, r) {
			res.breaks++
		}
		rr := r
		prev = &rr
	}
	return res
}

// chatRequests counts the chat requests (not summaries, not refused) the
// server got so far: the index the next one will have.
func chatRequests(srv *llmtest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if !r.Refused && r.Step >= 0 {
			n++
		}
	}
	return n
}

// extends reports whether next's messages start with all of prev's, byte
// for byte, with the same tools: the server's KV cache reuses all of it.
func extends(tb testing.TB, prev, next llmtest.Recorded) bool {
	pm, nm := rawMessages(tb, prev.Body), rawMessages(tb, next.Body)
	if len(nm) < len(pm) {
		return false
	}
	for i := range pm {
		if !bytes.Equal(pm[i], nm[i]) {
			return false
		}
	}
	return bytes.Equal(rawField(tb, prev.Body, "tools"), rawField(tb, next.Body, "tools"))
}

// renderPrompt lays a request out as a template would (tools, then the
// messages), to count the prefix a KV cache shares with the previous one.
func renderPrompt(tb testing.TB, r llmtest.Recorded) []byte {
	var b bytes.Buffer
	b.Write(rawField(tb, r.Body, "tools"))
	for _, msg := range rawMessages(tb, r.Body) {
		b.Write(msg)
	}
	return b.Bytes()
}

func commonLen(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Ten short turns that each read a ~7 KB file in an 8,192-token window:
// without context budgeting the third answer would be the last and every
// later request refused; all ten are answered and the server never
// refuses a request.
func TestTenReadsInAnEightKWindow(t *testing.T) {
	res := runLongSession(t, longOpts{turns: 10, fileSize: 7000, nCtx: 8192})
	if res.answered != 10 || res.refused != 0 {
		t.Fatalf("answered %d of 10, refused requests %d (steps %d)", res.answered, res.refused, res.steps)
	}
	if res.biggest > 8192 {
		t.Fatalf("biggest prompt %d tokens in an 8,192 window", res.biggest)
	}
	// The probed window bounds each output: 15 % of 8,192 tokens.
	for _, r := range res.srv.Requests() {
		for _, m := range r.Messages {
			if m.Role == "tool" && len(m.Content) > 4400 {
				t.Fatalf("a tool output of %d characters in an 8k window", len(m.Content))
			}
		}
	}
	// Old outputs went as stubs, and what was sent says how to get them back.
	last := res.srv.Requests()[len(res.srv.Requests())-1]
	stubs := 0
	for _, m := range last.Messages {
		if m.Role == "tool" && strings.HasPrefix(m.Content, "[output of read_file f") && strings.HasSuffix(m.Content, "read it again if needed]") {
			stubs++
		}
	}
	if stubs == 0 {
		t.Fatalf("no masked output in the last request")
	}
	// The stored history is never masked.
	for _, m := range res.session.History() {
		if strings.HasPrefix(m.Content, "[output of ") {
			t.Fatal("a stub entered the stored history")
		}
	}
}

// Prefix stability over a 40-turn session in an 8k window: every request extends the
// previous one byte for byte, except right after a logged step (masking,
// compaction), and there are far fewer steps than turns.
func TestLongSessionPrefixStableBetweenSteps(t *testing.T) {
	t.Parallel()
	res := runLongSession(t, longOpts{turns: 40, fileSize: 3000, nCtx: 8192})
	if res.answered != 40 || res.refused != 0 {
		t.Fatalf("answered %d of 40, refused %d", res.answered, res.refused)
	}
	var prev *llmtest.Recorded
	idx := 0
	for _, r := range res.srv.Requests() {
		if r.Refused || r.Step == -1 {
			continue
		}
		if prev != nil && !extends(t, *prev, r) && !res.stepAt[idx] {
			t.Errorf("chat request %d breaks the prefix without a step", idx)
		}
		rr := r
		prev = &rr
		idx++
	}
	if len(res.stepAt) == 0 || len(res.stepAt)*2 > 40 || res.breaks > len(res.stepAt) {
		t.Fatalf("%d requests after a context step, %d prefix breaks over 40 turns: want a few steps, not one every turn or two", len(res.stepAt), res.breaks)
	}
	// The compaction ran mid-turn (after a read): the user was told.
	full := 0
	for _, e := range res.events {
		if st, ok := e.(engine.Struggle); ok && st.Kind == "context" && strings.Contains(st.Text, "% full — summarised earlier turns") {
			full++
		}
	}
	if res.summaries > 0 && full == 0 {
		t.Error("a mid-turn compaction without its ⚠ context N% full note")
	}
	t.Logf("40 turns: %d steps, %d prefix breaks, %d summaries, biggest prompt %d, re-prefilled %d tokens", res.steps, res.breaks, res.summaries, res.biggest, res.reprefill)
}

// A server that refuses a prompt mm thought would fit (the configured
// window is too large): mm learns the real one from the error, shrinks,
// sends again, answers — and the next turns are not refused again.
func TestWrongConfiguredWindowRecovers(t *testing.T) {
	res := runLongSession(t, longOpts{turns: 6, fileSize: 12000, nCtx: 8192, configured: 32768})
	if res.answered != 6 {
		t.Fatalf("answered %d of 6", res.answered)
	}
	if res.refused != 1 {
		t.Fatalf("refused requests = %d, want exactly the first that overflowed", res.refused)
	}
	var warned bool
	for _, e := range res.events {
		if st, ok := e.(engine.Struggle); ok && st.Kind == "context" && strings.Contains(st.Text, "8,192 tokens (not 32,768)") {
			warned = true
		}
	}
	if !warned {
		t.Fatal("no ⚠ context overflow line naming the real window")
	}
}

// BenchmarkLongSession measures the two masking policies over a 40-turn
// session in an 8k window (each turn reads a 3 KB file): turns answered,
// refused requests, the biggest prompt, prefix breaks and the tokens the
// server had to read again (prompt less the prefix it shared with the
// previous request, summed — what a KV cache could not reuse).
//
//	go test -run '^$' -bench LongSession -benchtime 1x ./engine
func BenchmarkLongSession(b *testing.B) {
	for _, p := range []struct {
		name      string
		everyTurn bool
	}{{"steps", false}, {"every-turn", true}} {
		b.Run(p.name, func(b *testing.B) {
			var res longResult
			for range b.N {
				res = runLongSession(b, longOpts{turns: 40, fileSize: 3000, nCtx: 8192, everyTurn: p.everyTurn})
			}
			b.ReportMetric(float64(res.answered), "turns")
			b.ReportMetric(float64(res.refused), "refused")
			b.ReportMetric(float64(res.biggest), "biggest-prompt")
			b.ReportMetric(float64(res.breaks), "prefix-breaks")
			b.ReportMetric(float64(res.summaries), "summaries")
			b.ReportMetric(float64(res.reprefill), "reprefilled-tokens")
		})
	}
	// A model that answers the summary request with a tool call: every
	// compaction fails. Requests per turn after the first failure should
	// stay at 2 (the read and the answer).
	b.Run("failing-summary", func(b *testing.B) {
		o := longOpts{turns: 30, fileSize: 20 << 10, nCtx: 65536, unknown: true}
		var res longResult
		for range b.N {
			res = runLongSessionWith(b, o, failingSummaryScenario(o))
		}
		worst, after := 0, false
		for _, n := range res.perTurn {
			if after {
				worst = max(worst, n)
			}
			after = after || n > 2
		}
		b.ReportMetric(float64(res.answered), "turns")
		b.ReportMetric(float64(res.summaries), "summaries")
		b.ReportMetric(float64(worst), "max-requests/turn-after-failure")
		if worst > 2 {
			b.Errorf("a turn after the failed compaction made %d model requests", worst)
		}
	})
}

// Bounded growth: thirty turns that each read a 200 KB file stay inside
// a 32k window (before, the last request was ≈ 139k tokens); the stored
// history keeps each output whole up to its bound, never the file.
func TestBigReadsStayBounded(t *testing.T) {
	t.Parallel()
	res := runLongSession(t, longOpts{turns: 30, fileSize: 200 << 10, nCtx: 32768})
	if res.answered != 30 || res.refused != 0 || res.biggest > 32768 {
		t.Fatalf("answered %d, refused %d, biggest prompt %d", res.answered, res.refused, res.biggest)
	}
	stored := 0
	for _, m := range res.session.History() {
		stored += len(m.Content)
	}
	if stored > 30*16500 {
		t.Fatalf("stored history holds %d bytes after 30 big reads", stored)
	}
	t.Logf("biggest prompt %d tokens, %d steps, %d summaries, stored history %d bytes", res.biggest, res.steps, res.summaries, stored)
}

// With the window unknown (a generic OpenAI API), masking falls back on
// turn counts: old outputs still become stubs, in steps.
func TestUnknownWindowMasksByCount(t *testing.T) {
	res := runLongSession(t, longOpts{turns: 10, fileSize: 2000, nCtx: 65536, unknown: true})
	if res.answered != 10 {
		t.Fatalf("answered %d", res.answered)
	}
	last := res.srv.Requests()[len(res.srv.Requests())-1]
	stubs := 0
	for _, m := range last.Messages {
		if m.Role == "tool" && strings.HasPrefix(m.Content, "[output of read_file") {
			stubs++
		}
	}
	if stubs == 0 || res.steps == 0 || res.steps > 3 {
		t.Fatalf("%d stubs, %d steps over 10 turns with an unknown window", stubs, res.steps)
	}
}

// failingSummaryScenario is longScenario with a model that answers the
// summary request with a tool call instead of notes: every compaction
// fails ("the model wrote an empty summary").
func failingSummaryScenario(o longOpts) llmtest.Scenario {
	sc := longScenario(o)
	sc.Replies = []llmtest.Reply{{When: summaryAsk, Step: llmtest.Step{
		ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": "f01.txt"}}}}}}
	return sc
}

// A failed compaction is not retried before every model call: that would
// cost two extra 20–25 KB summary requests per turn for the rest of the
// session, each a full prompt read on a small local model, and a ⚠ line
// each time. After a failure mm masks harder and retries only once
// the conversation has grown enough to matter; the user is told once.
func TestFailedCompactionBacksOff(t *testing.T) {
	t.Parallel()
	o := longOpts{turns: 30, fileSize: 20 << 10, nCtx: 65536, unknown: true}
	res := runLongSessionWith(t, o, failingSummaryScenario(o))
	if res.answered != o.turns {
		t.Fatalf("answered %d of %d turns", res.answered, o.turns)
	}
	if res.summaries == 0 {
		t.Fatal("no summary was ever tried: the test does not reach compaction")
	}
	first := -1
	for i, n := range res.perTurn {
		if first < 0 && n > 2 {
			first = i
			continue
		}
		if first >= 0 && n > 2 {
			t.Errorf("turn %d made %d model requests after the failed compaction of turn %d (want ≤ 2: its read and its answer)", i+1, n, first+1)
		}
	}
	notes := 0
	for _, e := range res.events {
		if s, ok := e.(engine.Struggle); ok && strings.Contains(s.Text, "compaction failed") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("%d ⚠ compaction-failed notes, want 1", notes)
	}
	last := res.srv.Requests()[len(res.srv.Requests())-1]
	stubs := 0
	for _, m := range last.Messages {
		if m.Role == "tool" && strings.HasPrefix(m.Content, "[output of read_file") {
			stubs++
		}
	}
	if stubs < o.turns-2 {
		t.Errorf("after the failure only %d of %d old outputs are masked: mm should mask harder instead", stubs, o.turns-1)
	}
	t.Logf("requests per turn %v, %d summaries", res.perTurn, res.summaries)
}

// A long session holds in memory only what its next request needs: a
// masked output (sent as its stub) lives in the session's file in the
// state directory, and comes back whole wherever the whole is needed —
// the stored session, a summary of old turns. Thirty reads of a 200 KB
// file once grew the process by megabytes of outputs it would not send
// again.
func TestMaskedOutputsLiveOnDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		o    longOpts
		held int // bytes of history in memory at the end, at most
	}{
		// Held: the outputs of the turns not masked yet, each within its
		// 16,000-character bound, and the prompts and answers.
		{"big reads, known window", longOpts{turns: 30, fileSize: 200 << 10, nCtx: 32768, stored: true}, 5 * 16500},
		{"window unknown, compacted", longOpts{turns: 20, fileSize: 20 << 10, nCtx: 65536, unknown: true, stored: true}, 5 * 16500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runLongSession(t, tc.o)
			if res.answered != tc.o.turns || res.refused != 0 {
				t.Fatalf("answered %d of %d, refused %d", res.answered, tc.o.turns, res.refused)
			}
			h := res.session.History()
			whole, total := 0, 0
			for _, m := range h {
				total += len(m.Content)
				if m.Role == llm.RoleTool && len(m.Content) > 1000 {
					whole++
				}
			}
			if held := engine.HeldBytes(res.session); held > tc.held {
				t.Errorf("the session holds %d bytes of its %d-byte conversation in memory", held, total)
			}
			if whole < 4 {
				t.Errorf("History gives %d whole outputs: the outputs kept on disk did not come back", whole)
			}
			rec := res.session.Record()
			if len(rec.History) != len(h) {
				t.Fatalf("Record holds %d messages, History %d", len(rec.History), len(h))
			}
			loaded, err := store.Open(res.storeDir, nil).Load(res.session.ID())
			if err != nil {
				t.Fatal(err)
			}
			if len(loaded.History) != len(h) {
				t.Fatalf("the stored session holds %d messages, the session %d", len(loaded.History), len(h))
			}
			for i := range h {
				if loaded.History[i].Content != h[i].Content || rec.History[i].Content != h[i].Content {
					t.Fatalf("message %d (%s) differs: stored %d bytes, Record %d, History %d", i, h[i].Role, len(loaded.History[i].Content), len(rec.History[i].Content), len(h[i].Content))
				}
			}
			t.Logf("held %d of %d bytes, %d whole outputs, %d summaries", engine.HeldBytes(res.session), total, whole, res.summaries)
		})
	}
}

// TestSessionSizeBounded: a 200-turn session with 100 edits (the real
// edit_file tool) of a 2,000-line file (107 KiB). What the session keeps
// of an edit is its diff, not the file twice, and a save writes the
// turn, not the session: the last save writes a few KiB.
//
// Figures (200 turns; 60 under -race): go test -run TestSessionSizeBounded -v ./engine
func TestSessionSizeBounded(t *testing.T) {
	t.Parallel()
	turns, lines := 200, 2000
	if raceEnabled {
		// The bounds below hold turn by turn; 60 turns show them at a
		// tenth of the CPU the detector would spend on 200.
		turns = 60
	}
	dir, stateDir := t.TempDir(), t.TempDir()
	var src strings.Builder
	for i := range lines {
		fmt.Fprintf(&src, "line %04d: some code that the model edits now and then\n", i)
	}
	big := filepath.Join(dir, "big.go")
	if err := os.WriteFile(big, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The model reads the file first (edit_file asks for that).
	steps := []llmtest.Step{{ToolCalls: []llmtest.ToolCall{{Name: "read_file", ArgsRaw: `{"path":"big.go"}`}}}}
	for i := 1; i <= turns; i++ {
		if i%2 == 1 {
			k := (i / 2 * 19) % lines
			args, _ := json.Marshal(map[string]any{"path": "big.go", "edits": []map[string]string{{
				"old": fmt.Sprintf("line %04d: some code that the model edits now and then", k),
				"new": fmt.Sprintf("line %04d: edited in turn %d", k, i),
			}}})
			steps = append(steps, llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "edit_file", ArgsRaw: string(args)}}},
				llmtest.Step{Content: fmt.Sprintf("Edited line %d.", k)})
		} else {
			steps = append(steps, llmtest.Step{Content: "Noted, nothing to change this time."})
		}
	}
	srv := llmtest.NewServer(llmtest.Scenario{Steps: steps, NCtx: 1 << 20})
	t.Cleanup(srv.Close)
	st := store.Open(stateDir, nil)
	s := engine.NewSession(engine.Options{
		Model:     fakeModel(srv),
		ModelName: "fake-model",
		Tools:     tools.NewRegistry(files.New(files.Options{MaxTokens: 4096})...),
		Env:       diskEnv(t, dir, nil),
		Sampling:  llm.Sampling{MaxTokens: 4096},
		Store:     st,
		ID:        "sess_size",
		// A window the session never fills: no compaction, so the
		// history grows with the session, as a worst case.
		ContextWindow: func(context.Context) int { return 1 << 20 },
	})
	// sizes are the session's files now: the record, and the rest (the
	// replay log, when there is one).
	sizes := func() (record, rest int64) {
		fs, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*", "sess_size*"))
		for _, f := range fs {
			if fi, err := os.Stat(f); err == nil {
				if strings.HasSuffix(f, ".json") {
					record += fi.Size()
				} else {
					rest += fi.Size()
				}
			}
		}
		return record, rest
	}
	var total, last, maxWrite, prevRest int64
	for i := 1; i <= turns; i++ {
		var failed string
		var toolErr []string
		end := s.Run(context.Background(), fmt.Sprintf("Turn %d: look at big.go.", i), func(e engine.Event) {
			if st, ok := e.(engine.Struggle); ok && st.Kind == "store" {
				failed = st.Text
			}
			if f, ok := e.(engine.ToolFinished); ok && f.Result.IsError {
				toolErr = append(toolErr, f.Result.Text)
			}
		})
		if end.Reason != engine.EndTurn || failed != "" || len(toolErr) > 0 {
			t.Fatalf("turn %d: %+v %s %v", i, end, failed, toolErr)
		}
		rec, rest := sizes()
		last = rec + max(0, rest-prevRest) // what this save wrote
		total += last
		maxWrite = max(maxWrite, last)
		prevRest = rest
	}
	rec, rest := sizes()
	loaded, err := st.Load("sess_size")
	if err != nil {
		t.Fatal(err)
	}
	hist, _ := json.Marshal(loaded.History)
	t.Logf("%d turns, %d edits of a %d-line file (%d KiB): session on disk %d KiB (record %d B, logs %d KiB; the history is %d KiB of it); last save wrote %d B, largest %d KiB, all saves %d KiB",
		turns, turns/2, lines, len(src.String())>>10, (rec+rest)>>10, rec, rest>>10, int64(len(hist))>>10, last, maxWrite>>10, total>>10)

	if got := loaded.Turns; got != turns {
		t.Fatalf("turns on disk = %d", got)
	}
	edits := 0
	for _, e := range loaded.Replay {
		if e.Tool != nil && len(e.Tool.Diffs) == 1 {
			edits++
			d := e.Tool.Diffs[0]
			if d.Old == nil || !strings.Contains(d.New, "edited in turn") || strings.Count(d.New, "\n") > 2*store.DiffContext+1 {
				t.Fatalf("a kept diff is not the change with its context:\n%s", d.New)
			}
		}
	}
	if edits != turns/2 {
		t.Errorf("%d edits kept for replay, want %d", edits, turns/2)
	}
	// The bounds: 1 KiB of replay per turn at most (an edit's diff, 7
	// lines each side) beside the history; a save writes the turn.
	if size := rec + rest; size > int64(len(hist))+int64(turns)*1024 {
		t.Errorf("session is %d KiB, history %d KiB: more than 1 KiB per turn beside the history", size>>10, len(hist)>>10)
	}
	if last > 16<<10 {
		t.Errorf("the last save wrote %d KiB of a %d KiB session: a save is O(session)", last>>10, (rec+rest)>>10)
	}
}
