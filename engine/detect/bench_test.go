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
