package detect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusFamily is one file of testdata/textcalls: a family's syntax with
// its exact markers, where it comes from, and cases: what must run, what
// must be noted (never shown, never dropped), and look-alikes that must be
// shown as they are. cmd/mm replays the same files through the binary.
type corpusFamily struct {
	Family  string   `json:"family"`
	Title   string   `json:"title"`
	Sources []string `json:"sources"`
	Cases   []struct {
		Name    string `json:"name"`
		Want    string `json:"want"` // run, note, show, reasoning (a call in <think>, noted)
		Text    string `json:"text"`
		Shown   string `json:"shown"`   // run, note: what is shown before the calls
		Problem string `json:"problem"` // note: part of the problem
		Format  string `json:"format"`  // when it is not the family's
		Calls   []struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"calls"`
	} `json:"cases"`
}

func loadCorpus(t *testing.T) []corpusFamily {
	t.Helper()
	files, _ := filepath.Glob("testdata/textcalls/*.json")
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	var out []corpusFamily
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c corpusFamily
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(c.Sources) == 0 || c.Title == "" {
			t.Errorf("%s: every family cites its source", f)
		}
		out = append(out, c)
	}
	return out
}

// pipeline streams chunks through the think filter then the detector, as
// a generation does.
func pipeline(ts *Toolset, chunks []string) (shown string, call *TextCall) {
	think := NewThinkFilter(ThinkOptions{})
	d := NewTextCallDetector(ts, TextCallOptions{})
	var b strings.Builder
	text := func(segs []Segment) bool {
		for _, s := range segs {
			if s.Reasoning {
				continue
			}
			show, c := d.Write(s.Text)
			b.WriteString(show)
			if c != nil {
				call = c
				return true
			}
		}
		return false
	}
	for _, c := range chunks {
		if text(think.Write(c)) {
			return b.String(), call
		}
	}
	if text(think.Flush()) {
		return b.String(), call
	}
	show, c := d.Flush()
	b.WriteString(show)
	return b.String(), c
}

// TestTextCallFamiliesCorpus: every case of every family, streamed in
// chunks of 1, 2, 3, 5, 7 and 64 bytes: a valid whole answer runs with the
// right tools and arguments, in order; the rest is noted and its markup
// never shown; look-alikes are shown untouched and never run.
func TestTextCallFamiliesCorpus(t *testing.T) {
	ts := testTools()
	seen := map[string]bool{}
	for _, fam := range loadCorpus(t) {
		seen[fam.Family] = true
		for _, tc := range fam.Cases {
			t.Run(fam.Family+"/"+tc.Name, func(t *testing.T) {
				for _, n := range []int{1, 2, 3, 5, 7, 64} {
					shown, call := pipeline(ts, chunked(tc.Text, n))
					switch tc.Want {
					case "show":
						if call != nil || shown != tc.Text {
							t.Fatalf("chunks of %d: a look-alike was taken: call %+v, shown %q", n, call, shown)
						}
						continue
					case "reasoning":
						inner := strings.TrimSuffix(strings.TrimPrefix(tc.Text, "<think>"), "</think>")
						if call != nil || strings.TrimSpace(shown) != "" {
							t.Fatalf("chunks of %d: the answer is empty: call %+v, shown %q", n, call, shown)
						}
						if c := ReasoningCall(inner, ts); c == nil || c.Convertible() || !strings.Contains(c.Note(), "inside your reasoning") {
							t.Fatalf("the call in the reasoning was not found: %+v", c)
						}
						continue
					case "run", "note":
					default:
						t.Fatalf("want %q", tc.Want)
					}
					if call == nil {
						t.Fatalf("chunks of %d: not recognised; shown %q", n, shown)
					}
					if strings.TrimSpace(shown) != strings.TrimSpace(tc.Shown) {
						t.Fatalf("chunks of %d: shown %q, want %q", n, shown, tc.Shown)
					}
					format := fam.Family
					if tc.Format != "" {
						format = tc.Format
					}
					if string(call.Format) != format {
						t.Errorf("format %s, want %s", call.Format, format)
					}
					if tc.Want == "note" {
						if call.Convertible() || !strings.Contains(call.Problem, tc.Problem) || call.Text == "" {
							t.Fatalf("chunks of %d: want a note (%q); got %+v", n, tc.Problem, call)
						}
						if !strings.Contains(call.Note(), familyOf(call.Format).title) {
							t.Fatalf("the note does not name the syntax: %s", call.Note())
						}
						continue
					}
					if !call.Convertible() || len(call.Calls) != len(tc.Calls) {
						t.Fatalf("chunks of %d: want %d calls to run; got %+v", n, len(tc.Calls), call)
					}
					for i, want := range tc.Calls {
						got := call.Calls[i]
						if got.Name != want.Name || compactJSON(t, got.Arguments) != compactJSON(t, want.Args) {
							t.Fatalf("call %d: %s %s, want %s %s", i, got.Name, got.Arguments, want.Name, want.Args)
						}
					}
				}
			})
		}
	}
	for _, f := range Families() {
		if !seen[string(f)] {
			t.Errorf("family %s has no corpus file", f)
		}
	}
}
