package detect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusText is the realistic answers, with a reasoning block before each,
// repeated to n bytes.
func corpusText(b *testing.B, n int) string {
	files, _ := filepath.Glob("testdata/normal/answer_*")
	var sb strings.Builder
	for sb.Len() < n {
		for _, f := range files {
			c, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			sb.WriteString("<think>\nThe user wants an explanation; a < b holds, so answer.\n</think>\n\n")
			sb.Write(c)
		}
	}
	return sb.String()[:n]
}

func chunked(s string, n int) []string {
	var out []string
	for s != "" {
		k := min(n, len(s))
		out, s = append(out, s[:k]), s[k:]
	}
	return out
}

// BenchmarkThinkFilter: 64 KiB of answers with reasoning blocks, in
// 8-byte deltas (about two tokens each).
func BenchmarkThinkFilter(b *testing.B) {
	chunks := chunked(corpusText(b, 64<<10), 8)
	b.SetBytes(64 << 10)
	b.ReportAllocs()
	for b.Loop() {
		f := NewThinkFilter(ThinkOptions{})
		for _, c := range chunks {
			f.Write(c)
		}
		f.Flush()
	}
}

// BenchmarkTextCall: the same text through the tool-call detector (after
// the filter, as the engine does it), in 8-byte deltas.
func BenchmarkTextCall(b *testing.B) {
	text := ThinkOptions{}.Strip(corpusText(b, 64<<10))
	chunks := chunked(text, 8)
	ts := testTools()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewTextCallDetector(ts, TextCallOptions{})
		for _, c := range chunks {
			if _, call := d.Write(c); call != nil {
				b.Fatal("false positive in the corpus")
			}
		}
		d.Flush()
	}
}

// holdLatency streams an answer through the pipeline (the think filter,
// then the detector, as the engine does) in deltas of tokenBytes bytes,
// about one token each, and measures in deltas how long bytes wait before
// they are shown: first is the wait of the first visible (non-space) byte,
// mean and max over every byte. A call found in a normal answer is a false
// positive: ok is false then.
func holdLatency(ts *Toolset, text string) (first int, mean float64, max int, ok bool) {
	const tokenBytes = 4
	chunks := chunked(text, tokenBytes)
	think := NewThinkFilter(ThinkOptions{})
	d := NewTextCallDetector(ts, TextCallOptions{})
	shown, total, first := 0, 0, -1
	out := func(at int, segs []Segment) bool {
		for _, s := range segs {
			if s.Reasoning {
				shown += len(s.Text)
				continue
			}
			show, call := d.Write(s.Text)
			if call != nil {
				return false
			}
			for i := 0; i < len(show); i++ {
				wait := at - (shown+i)/tokenBytes
				total += wait
				max = maxInt(max, wait)
				if first < 0 && show[i] != ' ' && show[i] != '\n' {
					first = wait
				}
			}
			shown += len(show)
		}
		return true
	}
	for k, c := range chunks {
		if !out(k, think.Write(c)) {
			return 0, 0, 0, false
		}
	}
	if !out(len(chunks), think.Flush()) {
		return 0, 0, 0, false
	}
	show, call := d.Flush()
	if call != nil {
		return 0, 0, 0, false
	}
	if shown+len(show) != len(text) {
		return 0, 0, 0, false
	}
	for i := range len(show) {
		wait := len(chunks) - (shown+i)/tokenBytes
		total += wait
		max = maxInt(max, wait)
		if first < 0 && show[i] != ' ' && show[i] != '\n' {
			first = wait
		}
	}
	return first, float64(total) / float64(len(text)), max, true
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// BenchmarkHoldLatency: what holding back possible markup costs a user
// reading an ordinary answer (prose) and one that quotes code (fenced
// blocks, JSON, HTML, tags in prose), streamed a token at a time. The
// metrics are in tokens (4-byte deltas): the wait of the first visible
// byte (worst answer), the mean wait of every byte, and the longest wait
// of any byte; ns/op is the CPU time of streaming all the answers.
func BenchmarkHoldLatency(b *testing.B) {
	files, _ := filepath.Glob("testdata/normal/answer_*")
	groups := map[string][]string{}
	for _, f := range files {
		c, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		kind := "prose"
		if strings.Contains(string(c), "```") {
			kind = "code"
		}
		groups[kind] = append(groups[kind], string(c))
	}
	ts := testTools()
	for _, kind := range []string{"prose", "code"} {
		answers := groups[kind]
		b.Run(kind, func(b *testing.B) {
			var first, max int
			var mean float64
			for b.Loop() {
				first, max, mean = 0, 0, 0
				for _, a := range answers {
					f, m, x, ok := holdLatency(ts, a)
					if !ok {
						b.Fatalf("a normal answer was taken for a call:\n%s", a)
					}
					first, max, mean = maxInt(first, f), maxInt(max, x), mean+m/float64(len(answers))
				}
			}
			b.ReportMetric(float64(first), "first-wait-tokens")
			b.ReportMetric(mean, "mean-wait-tokens")
			b.ReportMetric(float64(max), "max-wait-tokens")
		})
	}
}

// BenchmarkTextCallLongHold: calls and candidates of 15 KB held back until
// decided — a JSON list of calls, a message object, a tag block, markup
// no reader knows — in 4-byte deltas: what is held is read again at
// every byte, so this stays linear only if the probes do.
func BenchmarkTextCallLongHold(b *testing.B) {
	big := strings.Repeat("line of text with words\\n", 600)
	inputs := []string{
		`[{"name": "write_file", "arguments": {"path": "a", "content": "` + big + `"}}]`,
		`{"role": "assistant", "content": "` + big + `"}`,
		"<write_file>\n<path>a</path>\n<content>" + big + "</content>\n</write_file>",
		"<|tool_use|>" + big,
	}
	ts := testTools()
	for b.Loop() {
		for _, in := range inputs {
			d := NewTextCallDetector(ts, TextCallOptions{})
			for _, c := range chunked(in, 4) {
				if _, call := d.Write(c); call != nil {
					break
				}
			}
			d.Flush()
		}
	}
}
