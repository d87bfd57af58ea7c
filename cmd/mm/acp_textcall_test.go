package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// textCallCorpus is engine/detect/testdata/textcalls: per family of tool
// calls written as text, the cases that must run, be noted, or be shown.
type textCallCase struct {
	family, name, want, text, shown string
	calls                           []struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
}

func loadTextCallCorpus(t *testing.T) []textCallCase {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", "engine", "detect", "testdata", "textcalls", "*.json"))
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	var out []textCallCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fam struct {
			Family string `json:"family"`
			Cases  []struct {
				Name, Want, Text, Shown string
				Calls                   []struct {
					Name string         `json:"name"`
					Args map[string]any `json:"args"`
				}
			}
		}
		if err := json.Unmarshal(b, &fam); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range fam.Cases {
			out = append(out, textCallCase{family: fam.Family, name: c.Name, want: c.Want, text: c.Text, shown: c.Shown, calls: c.Calls})
		}
	}
	return out
}

// TestACPTextCallFamilies: every case of the corpus of tool calls written
// as text (textCallCorpus), streamed by the fake model in 3-byte chunks
// through the built binary over ACP.
// A whole-answer call in any family runs, with the right tools and
// arguments, in order; anything else is never shown as the answer and
// never dropped — the model gets the note naming the syntax, and the
// user one short note; look-alikes are shown untouched and run nothing.
// Counted: shown, dropped, wrong tool or arguments — all must be 0.
//
// Each family runs in its own mm beside the others.
func TestACPTextCallFamilies(t *testing.T) {
	t.Parallel()
	var families []string
	byFamily := map[string][]textCallCase{}
	for _, c := range loadTextCallCorpus(t) {
		if byFamily[c.family] == nil {
			families = append(families, c.family)
		}
		byFamily[c.family] = append(byFamily[c.family], c)
	}
	var (
		mu    sync.Mutex
		total corpusCount
	)
	t.Cleanup(func() {
		t.Logf("corpus through mm acp: %d cases (%d run, %d noted, %d look-alikes): %d shown, %d dropped, %d wrong",
			total.cases, total.ran, total.noted, total.looks, total.shown, total.dropped, total.wrong)
	})
	for _, f := range families {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			n := runTextCallCases(t, byFamily[f])
			mu.Lock()
			defer mu.Unlock()
			total.add(n)
		})
	}
}

// corpusCount counts the corpus's cases by outcome.
type corpusCount struct {
	cases, ran, noted, looks, shown, dropped, wrong int
}

func (c *corpusCount) add(o corpusCount) {
	c.cases += o.cases
	c.ran += o.ran
	c.noted += o.noted
	c.looks += o.looks
	c.shown += o.shown
	c.dropped += o.dropped
	c.wrong += o.wrong
}

// runTextCallCases plays cases through one mm acp, a session each.
func runTextCallCases(t *testing.T, cases []textCallCase) corpusCount {
	sc := llmtest.Scenario{NCtx: 131072}
	for _, c := range cases {
		sc.Steps = append(sc.Steps, llmtest.Step{Content: c.text, ChunkSize: 3})
		if c.want != "show" {
			// After the calls ran, or after the note: the model answers.
			sc.Steps = append(sc.Steps, llmtest.Step{Content: "All done."})
		}
	}
	srv := llmtest.NewServer(sc)
	w := newWorldOn(t, srv)
	w.write("notes.txt", "remember the milk\n")
	w.write("todo.txt", "line one\nline two\nline three\n")
	p := w.serve(acptest.Options{})

	var shown, dropped, wrong, ran, noted, looks int
	seen, reqs := 0, 0
	for i, c := range cases {
		what := fmt.Sprintf("%s/%s", c.family, c.name)
		// A session per case: what one case wrote never steers the next.
		p.open()
		resp, err := p.prompt(fmt.Sprintf("case %d", i))
		if err != nil {
			for j, r := range srv.Requests() {
				t.Logf("request %d: step %d, last message %q", j+1, r.Step, r.Last().Content)
			}
			t.Fatalf("%s: %v", what, err)
		}
		if resp.StopReason != sdk.StopReasonEndTurn {
			t.Errorf("%s: stop reason %q", what, resp.StopReason)
		}
		all := p.Updates()
		updates := all[seen:]
		seen = len(all)
		msg := acptest.MessageText(updates)
		var started []*sdk.SessionUpdateToolCall
		for _, u := range updates {
			if u.ToolCall != nil {
				started = append(started, u.ToolCall)
			}
		}
		requests := srv.Requests()
		mine := requests[reqs:]
		reqs = len(requests)
		switch c.want {
		case "show":
			looks++
			if !strings.Contains(msg, c.text) || len(started) > 0 {
				wrong++
				t.Errorf("%s: a look-alike was not shown as it is (or ran): %q, %d calls", what, msg, len(started))
			}
			continue
		case "run":
			ran++
		case "note", "reasoning":
			noted++
		}
		// Not one byte of the markup reaches an agent_message_chunk: the
		// answer's text is what came before the call, then the next
		// generation's.
		if answer := strings.TrimSuffix(strings.TrimSpace(answerText(updates)), "All done."); strings.TrimSpace(answer) != strings.TrimSpace(c.shown) {
			shown++
			t.Errorf("%s: markup was shown as the answer:\n%q", what, answer)
		}
		if !strings.Contains(msg, "text tool call") {
			t.Errorf("%s: the user got no note: %q", what, msg)
		}
		if c.want == "note" || c.want == "reasoning" {
			// Never dropped: the next request carries the note naming the
			// syntax, and no call ran.
			told := false
			if len(mine) == 2 {
				for _, m := range mine[1].Messages {
					told = told || strings.Contains(m.Content, "you wrote a tool call as text (syntax:")
				}
			}
			if !told {
				dropped++
				t.Errorf("%s: the model was not told (%d requests)", what, len(mine))
			}
			if len(started) > 0 {
				wrong++
				t.Errorf("%s: a call ran from text that must not run", what)
			}
			continue
		}
		if len(started) != len(c.calls) {
			dropped++
			t.Errorf("%s: %d calls ran, want %d\n%s", what, len(started), len(c.calls), strings.Join(acptest.Describe(updates), "\n"))
			continue
		}
		for k, want := range c.calls {
			got := started[k]
			args, _ := got.RawInput.(map[string]any)
			if got.Kind != sdk.ToolKindRead || !reflect.DeepEqual(normalize(args), normalize(want.Args)) {
				wrong++
				t.Errorf("%s: call %d ran %s %v, want %s %v", what, k, got.Kind, got.RawInput, want.Name, want.Args)
			}
		}
	}
	if n := srv.Remaining(); n != 0 {
		t.Errorf("%d scenario steps unused", n)
	}
	return corpusCount{cases: len(cases), ran: ran, noted: noted, looks: looks, shown: shown, dropped: dropped, wrong: wrong}
}

// answerText is the agent's message without mm's own notes (struggles).
func answerText(us []sdk.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			if t := u.AgentMessageChunk.Content.Text.Text; !strings.HasPrefix(t, "\n\n_mm: ") {
				b.WriteString(t)
			}
		}
	}
	return b.String()
}

// normalize makes JSON numbers comparable whatever their Go type.
func normalize(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}
