package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// readTurns is a session where each turn reads f<NN>.txt then answers;
// the scripted model also answers mm's summary request whenever it comes.
func readTurns(n, nCtx int, extra ...llmtest.Step) llmtest.Scenario {
	var steps []llmtest.Step
	for i := 1; i <= n; i++ {
		steps = append(steps,
			llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": fmt.Sprintf("f%02d.txt", i)}}}},
			llmtest.Step{Content: fmt.Sprintf("f%02d.txt lists a fox's days.", i)},
		)
	}
	return llmtest.Scenario{NCtx: nCtx, Steps: append(steps, extra...), Replies: []llmtest.Reply{{
		When: "Write the updated notes now.",
		Step: llmtest.Step{Content: "- The user reads f01.txt onwards, one file a turn; each lists a fox's days."},
	}}}
}

// foxFiles writes f01..fNN of about size bytes each.
func foxFiles(t *testing.T, dir string, n, size int) {
	for i := 1; i <= n; i++ {
		var b strings.Builder
		for l := 1; b.Len() < size; l++ {
			fmt.Fprintf(&b, "%03d day %d of the fox in file %02d: it ran through the field and back home.\n", l, l, i)
		}
		testenv.WriteFile(t, filepath.Join(dir, fmt.Sprintf("f%02d.txt", i)), b.String())
	}
}

// foxWorld is a world on sc whose workspace holds n fox files of about
// size bytes each.
func foxWorld(t *testing.T, sc llmtest.Scenario, n, size int, extra ...string) *world {
	t.Helper()
	w := newWorldOn(t, llmtest.NewServer(sc), extra...)
	foxFiles(t, w.dir, n, size)
	return w
}

// onlyURL is mmEnv with nothing but the base URL, as the README's Zed
// snippet sets: no provider, no model, no window.
func onlyURL(t *testing.T, srv *llmtest.Server, extra ...string) []string {
	var env []string
	for _, kv := range mmEnv(t, srv, extra...) {
		if !strings.HasPrefix(kv, "MM_PROVIDER=") && !strings.HasPrefix(kv, "MM_MODEL=") {
			env = append(env, kv)
		}
	}
	return env
}

func refused(srv *llmtest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Refused {
			n++
		}
	}
	return n
}

// The first contact, through the editor: an 8,192-token
// llama-server, only its URL configured, ten short turns that each read a
// ~7 KB file. Every turn is answered, the server never refuses a request,
// and the editor's meter knows the window (learnt from /props).
func TestACPTenReadsInAnEightKWindow(t *testing.T) {
	t.Parallel()
	sc := readTurns(10, 8192)
	sc.Models = []string{"qwen3-4b"}
	w := foxWorld(t, sc, 10, 7000)
	srv := w.srv
	w.env = onlyURL(t, srv)
	p := w.session()
	for i := 1; i <= 10; i++ {
		p.endTurn(fmt.Sprintf("What is in f%02d.txt?", i))
	}
	if n := refused(srv); n != 0 {
		t.Fatalf("%d requests refused by the server", n)
	}
	updates := p.Updates()
	sized := 0
	for _, u := range updates {
		if u.UsageUpdate != nil {
			if u.UsageUpdate.Size != 8192 {
				t.Fatalf("usage_update size %d, want the probed 8192", u.UsageUpdate.Size)
			}
			sized++
		}
	}
	if sized < 10 {
		t.Fatalf("%d usage updates for 10 turns", sized)
	}
	if m := srv.Requests()[0].Model; m != "qwen3-4b" {
		t.Errorf("model %q, want the served one", m)
	}
}

// /compact over ACP after four turns: one summary call, a reply with the
// numbers, the next request smaller and carrying the summary. A client
// that did not advertise session.compaction gets no compaction update;
// every message validates against the 2026-11 schema.
func TestACPCompactCommand(t *testing.T) {
	t.Parallel()
	w := foxWorld(t, readTurns(4, 32768, llmtest.Step{Content: "after the compaction"}), 4, 3000)
	srv := w.srv
	p := w.session()
	for i := 1; i <= 4; i++ {
		p.turn(fmt.Sprintf("What is in f%02d.txt?", i))
	}
	before := len(srv.Requests())
	big := srv.Requests()[before-1].PromptTokens
	upd := p.Updates()
	p.endTurn("/compact")
	reply := acptest.MessageText(p.Updates()[len(upd):])
	if !strings.Contains(reply, "compacted: ") || !strings.Contains(reply, " tokens") {
		t.Fatalf("/compact replied %q", reply)
	}
	if reqs := srv.Requests()[before:]; len(reqs) != 1 || reqs[0].Step != -1 {
		t.Fatalf("/compact made %d requests, want one summary call", len(reqs))
	}
	if strings.Contains(p.Received.String(), `"compaction_`) {
		t.Error("a client that did not advertise session.compaction got compaction updates")
	}
	p.turn("And now?")
	next := srv.Requests()[len(srv.Requests())-1]
	if next.PromptTokens >= big || !strings.Contains(next.Messages[1].Content, "each lists a fox's days") {
		t.Fatalf("next request %d tokens (was %d); first message %q", next.PromptTokens, big, next.Messages[1].Content)
	}
}

// A configured window larger than the server's: the refused request is
// shrunk and sent again, the turn answers, the next turn is not refused,
// and the user saw one ⚠ line about it.
func TestACPOverflowFromWrongWindow(t *testing.T) {
	t.Parallel()
	w := foxWorld(t, readTurns(3, 8192), 3, 20000)
	w.config("contextWindow: 32768\n")
	p := w.session()
	for i := 1; i <= 3; i++ {
		p.endTurn(fmt.Sprintf("What is in f%02d.txt?", i))
	}
	if n := refused(w.srv); n != 1 {
		t.Fatalf("%d refused requests, want only the one that taught mm the window", n)
	}
	if text := p.answer(); !strings.Contains(text, "context overflow: the server's window is 8,192 tokens (not 32,768)") {
		t.Fatalf("no overflow note in %q", text)
	}
}

// Line mode: the same overflow recovery in `mm -p` (the configured
// window is too large for the server's).
func TestLineOverflowRecovers(t *testing.T) {
	t.Parallel()
	w := foxWorld(t, readTurns(1, 4096), 1, 14000)
	srv := w.srv
	w.config("contextWindow: 32768\n")
	out, stderr, code := w.line("", "-p", "What is in f01.txt?", "--yes")
	if code != 0 || !strings.Contains(out, "lists a fox's days") {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "context overflow: the server's window is 4,096 tokens (not 32,768)") || refused(srv) != 1 {
		t.Fatalf("refused %d; no overflow line on stderr:\n%s", refused(srv), stderr)
	}
}

// Line mode /compact: the workspace's saved session, continued with
// --continue, is compacted; the next turn carries the summary.
func TestLineCompactCommand(t *testing.T) {
	t.Parallel()
	w := foxWorld(t, readTurns(4, 32768, llmtest.Step{Content: "after the compaction"}), 4, 3000)
	srv := w.srv
	for i := 1; i <= 4; i++ {
		args := []string{"-p", fmt.Sprintf("What is in f%02d.txt?", i), "--yes"}
		if i > 1 {
			args = append(args, "--continue")
		}
		if out, stderr, code := w.line("", args...); code != 0 || !strings.Contains(out, "lists a fox's days") {
			t.Fatalf("turn %d: exit %d, stdout %q, stderr:\n%s", i, code, out, stderr)
		}
	}
	out, stderr, code := w.line("", "-p", "/compact", "--continue")
	if code != 0 || !strings.HasPrefix(out, "compacted: ") {
		t.Fatalf("/compact: exit %d, stdout %q, stderr:\n%s", code, out, stderr)
	}
	out, stderr, code = w.line("", "-p", "And now?", "--continue")
	if code != 0 || !strings.Contains(out, "after the compaction") {
		t.Fatalf("after /compact: exit %d, %q\n%s", code, out, stderr)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	if !strings.Contains(last.Messages[1].Content, "each lists a fox's days") {
		t.Fatalf("the summary did not survive in the saved session: %q", last.Messages[1].Content)
	}
}

// TestACPWindowProbeNeverBlocksATurn: the context window is probed
// without blocking a turn: a server whose /props never answers does not
// delay the first answer (the window is probed in the background).
func TestACPWindowProbeNeverBlocksATurn(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "short_answer")
	target, _ := url.Parse(srv.RootURL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	hold := make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/props" {
			select { // a llama-server stuck answering /props
			case <-hold:
			case <-r.Context().Done():
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	t.Cleanup(func() { close(hold) })
	newWorld(t, "", "MM_BASE_URL="+front.URL+"/v1").session().endTurn("hi") // while /props hangs
	if len(srv.Requests()) != 1 {
		t.Fatalf("%d model requests", len(srv.Requests()))
	}
}

// TestACPWindowUnknownNoted: a server that is reached but does not say
// its window (here the fake behind provider openai, which has no /props)
// is told to the user once per session, with the fix — not only in a log
// line.
func TestACPWindowUnknownNoted(t *testing.T) {
	t.Parallel()
	const note = "context window unknown: the server does not say it — set contextWindow in the config"
	said := func(p *editor) string { return p.answer() + acptest.ThoughtText(p.Updates()) }
	p := newWorldOn(t, llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "one"}, {Content: "two"}, {Content: "three"}, {Content: "four"}}}), "MM_PROVIDER=openai").session()
	// The probe runs in the background: the note comes with the first
	// answer after it ended, then never again.
	for i := 0; i < 4; i++ {
		p.turn("hello")
		if strings.Contains(said(p), note) && i < 3 {
			i = 2 // one more turn: it must not repeat
		}
	}
	if n := strings.Count(said(p), note); n != 1 {
		t.Errorf("the window note was given %d times, want once:\n%s", n, p.answer())
	}

	// With a window the server reports (llama.cpp /props), no such note.
	p2 := newWorldOn(t, llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "one"}, {Content: "two"}}})).session()
	for i := 0; i < 2; i++ {
		p2.prompt("hello")
	}
	if strings.Contains(said(p2), "context window unknown") {
		t.Errorf("a window note although /props gives n_ctx")
	}
}
