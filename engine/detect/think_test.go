package detect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// thinkAll feeds chunks and returns the merged segments, Flush included.
func thinkAll(opts ThinkOptions, chunks ...string) []Segment {
	f := NewThinkFilter(opts)
	var segs []Segment
	add := func(ss []Segment) {
		for _, s := range ss {
			if n := len(segs) - 1; n >= 0 && segs[n].Reasoning == s.Reasoning {
				segs[n].Text += s.Text
			} else {
				segs = append(segs, s)
			}
		}
	}
	for _, c := range chunks {
		add(f.Write(c))
	}
	add(f.Flush())
	return segs
}

func text(s string) Segment   { return Segment{Text: s} }
func reason(s string) Segment { return Segment{Text: s, Reasoning: true} }

func sameSegs(a, b []Segment) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestThinkFilter(t *testing.T) {
	magistral := ThinkOptions{Tags: []ThinkTag{{"[THINK]", "[/THINK]"}, {"<think>", "</think>"}}}
	tests := []struct {
		name string
		opts ThinkOptions
		in   string
		want []Segment
	}{
		{"plain text", ThinkOptions{}, "hello <b>world</b> a<b", []Segment{text("hello <b>world</b> a<b")}},
		{"block then answer", ThinkOptions{}, "<think>let me see</think>\n\nThe answer is 4.", []Segment{reason("let me see"), text("\n\nThe answer is 4.")}},
		{"think mid-answer", ThinkOptions{}, "First part. <think>hmm, wait</think> Second part.", []Segment{text("First part. "), reason("hmm, wait"), text(" Second part.")}},
		{"unclosed at end", ThinkOptions{}, "<think>still thinking when the stream ended", []Segment{reason("still thinking when the stream ended")}},
		{"partial close at end", ThinkOptions{}, "<think>abc</thi", []Segment{reason("abc</thi")}},
		{"partial open at end", ThinkOptions{}, "answer <thi", []Segment{text("answer <thi")}},
		{"lookalike released", ThinkOptions{}, "a <thinker> and <th> and <tk", []Segment{text("a <thinker> and <th> and <tk")}},
		{"stray close dropped", ThinkOptions{}, "reasoning the template opened</think>answer", []Segment{text("reasoning the template openedanswer")}},
		{"start inside", ThinkOptions{StartInside: true}, "reasoning</think>answer", []Segment{reason("reasoning"), text("answer")}},
		{"two blocks", ThinkOptions{}, "<think>a</think>b<think>c</think>d", []Segment{reason("a"), text("b"), reason("c"), text("d")}},
		{"empty block", ThinkOptions{}, "<think></think>answer", []Segment{text("answer")}},
		{"lt inside think", ThinkOptions{}, "<think>if a < b then</think>ok", []Segment{reason("if a < b then"), text("ok")}},
		{"magistral", magistral, "[THINK]plan[/THINK]done [x]", []Segment{reason("plan"), text("done [x]")}},
		{"no tags configured", ThinkOptions{Tags: []ThinkTag{}}, "<think>x</think>", []Segment{text("<think>x</think>")}},
		{"utf8 around tags", ThinkOptions{}, "é<think>ü</think>😀", []Segment{text("é"), reason("ü"), text("😀")}},
		// gpt-oss harmony markup leaked into content (real capture 05).
		{"harmony", ThinkOptions{}, "<|channel|>analysis<|message|>User says test.<|start|>assistant<|channel|>final<|message|>Got it!", []Segment{reason("User says test."), text("Got it!")}},
		{"harmony end and return", ThinkOptions{}, "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>b<|return|>", []Segment{reason("a"), text("b")}},
		{"harmony lookalike", ThinkOptions{}, "x <|y|> <|channel|>other", []Segment{text("x <|y|> <|channel|>other")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := thinkAll(tt.opts, tt.in); !sameSegs(got, tt.want) {
				t.Fatalf("one chunk: got %+v, want %+v", got, tt.want)
			}
			// Every split point, and every byte alone, give the same result.
			for i := 0; i <= len(tt.in); i++ {
				if got := thinkAll(tt.opts, tt.in[:i], tt.in[i:]); !sameSegs(got, tt.want) {
					t.Fatalf("split at %d: got %+v, want %+v", i, got, tt.want)
				}
			}
			bytewise := make([]string, len(tt.in))
			for i := 0; i < len(tt.in); i++ {
				bytewise[i] = tt.in[i : i+1]
			}
			if got := thinkAll(tt.opts, bytewise...); !sameSegs(got, tt.want) {
				t.Fatalf("byte by byte: got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// The acceptance case: a tag split over three chunks, in every way.
func TestThinkTagSplitOverThreeChunks(t *testing.T) {
	in := "Sure.<think>private</think>Done."
	want := []Segment{text("Sure."), reason("private"), text("Done.")}
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			if got := thinkAll(ThinkOptions{}, in[:i], in[i:j], in[j:]); !sameSegs(got, want) {
				t.Fatalf("chunks %q %q %q: got %+v", in[:i], in[i:j], in[j:], got)
			}
		}
	}
	// The brief's example, literally.
	got := thinkAll(ThinkOptions{}, "<th", "in", "k>reasoning</th", "ink>", "answer")
	if want := []Segment{reason("reasoning"), text("answer")}; !sameSegs(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// A partial tag is held only while it can still become a tag: `<t` then
// anything else is released at the next delta, not at the end.
func TestThinkHoldsOnlyWhileUndecided(t *testing.T) {
	f := NewThinkFilter(ThinkOptions{})
	if segs := f.Write("a <t"); len(segs) != 1 || segs[0].Text != "a " {
		t.Fatalf("first write: %+v", segs)
	}
	if segs := f.Write("ea"); len(segs) != 1 || segs[0].Text != "<tea" {
		t.Fatalf("second write should release the held bytes: %+v", segs)
	}
	if segs := f.Write("<think"); len(segs) != 0 {
		t.Fatalf("a full '<think' is still undecided: %+v", segs)
	}
	if segs := f.Write(">x"); len(segs) != 1 || !segs[0].Reasoning || segs[0].Text != "x" {
		t.Fatalf("got %+v", segs)
	}
	if !f.Inside() || !f.SawTag() {
		t.Fatal("Inside and SawTag should hold")
	}
}

// Answers without reasoning pass through untouched, <, > and all.
func TestThinkFilterCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/normal/*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in := string(b)
		if got := thinkAll(ThinkOptions{}, in[:len(in)/2], in[len(in)/2:]); len(got) != 1 || got[0] != text(in) {
			t.Errorf("%s changed", f)
		}
	}
}

func TestStripThinkDefault(t *testing.T) {
	tests := []struct{ in, want string }{
		{"no tags here  ", "no tags here  "},
		{"<think>\nplan\n</think>\n\nThe answer.", "The answer."},
		{"Before <think>x</think> after", "Before  after"},
		{"<think>never closed", ""},
		{"Answer. </think>", "Answer."},
		{"<|channel|>analysis<|message|>plan<|end|><|start|>assistant<|channel|>final<|message|>Done.", "Done."},
	}
	for _, tt := range tests {
		if got := (ThinkOptions{}).Strip(tt.in); got != tt.want {
			t.Errorf("ThinkOptions{}.Strip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := (ThinkOptions{StartInside: true}).Strip("reasoning</think>\nanswer"); got != "answer" {
		t.Errorf("StartInside strip = %q", got)
	}
}

// FuzzThinkFilter: never panics; the output does not depend on chunking;
// and text plus reasoning, concatenated in order, is the input without its
// tag occurrences.
func FuzzThinkFilter(f *testing.F) {
	for _, s := range []string{"", "<think>a</think>b", "<th<think>ink>", "</think></think>", "<<think>>", "a<thi", "<think>é</think>😀<"} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		whole := thinkAll(ThinkOptions{}, in)
		n := int(step)%7 + 1
		var chunks []string
		for s := in; s != ""; {
			k := min(n, len(s))
			chunks, s = append(chunks, s[:k]), s[k:]
		}
		if got := thinkAll(ThinkOptions{}, chunks...); !sameSegs(got, whole) {
			t.Fatalf("chunked by %d: %+v, whole: %+v", n, got, whole)
		}
		var cat strings.Builder
		for _, s := range whole {
			cat.WriteString(s.Text)
			if s.Text == "" {
				t.Fatal("empty segment")
			}
		}
		if want := strings.NewReplacer("<think>", "", "</think>", "").Replace(in); cat.String() != want {
			t.Fatalf("concatenation %q, want %+v", cat.String(), want)
		}
	})
}
