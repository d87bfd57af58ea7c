package engine

import (
	"strings"
	"testing"
)

func TestCompletePath(t *testing.T) {
	tests := []struct {
		in, path string
		done     bool
	}{
		{``, "", false},
		{`{`, "", false},
		{`{"pa`, "", false},
		{`{"path": "a.t`, "", false},
		{`{"path": "a.txt"`, "a.txt", true},
		{`{"path":"dir/\"q\".go",`, `dir/"q".go`, true},
		{`{"content": "x", "path": "b.go"`, "b.go", true},
		{`{"edits": [{"old": "a", "path": "no"}], "path": "c.go"}`, "c.go", true},
		{`{"content": "x"}`, "", true},
		{`["path"]`, "", true},
	}
	for _, tt := range tests {
		path, done := completePath(tt.in)
		if path != tt.path || done != tt.done {
			t.Errorf("completePath(%q) = %q, %v; want %q, %v", tt.in, path, done, tt.path, tt.done)
		}
	}
}

// The scanner fed byte by byte, as arguments stream, finds what
// completePath finds in the whole text.
func TestPathScannerStreamed(t *testing.T) {
	for _, in := range []string{
		`{"content": "a \"path\": \"x\", {[", "path": "b.go"}`,
		`{"edits": [{"old": "a", "path": "no"}], "path": "c.go"}`,
		`{"path":"dir/\"q\".go","content":"…"}`,
		`{"content": "x"}`,
		` {"path": 3}`,
		`"path"`,
	} {
		want, wantDone := completePath(in)
		var sc pathScanner
		var got string
		var done bool
		for i := 1; i <= len(in) && !done; i++ {
			got, done = sc.scan(in[:i])
		}
		if got != want || done != wantDone {
			t.Errorf("streamed %q: %q, %v; whole: %q, %v", in, got, done, want, wantDone)
		}
	}
}

// BenchmarkPreflightBigContentFirst streams 100 KB of content before the
// path, in 4-byte deltas as a model's tokens: linear, not quadratic.
func BenchmarkPreflightBigContentFirst(b *testing.B) {
	content := strings.Repeat("line of text\\n", 100_000/14)
	args := `{"content": "` + content + `", "path": "f.txt"}`
	for b.Loop() {
		var sc pathScanner
		for i := 4; i < len(args); i += 4 {
			if _, done := sc.scan(args[:i]); done {
				b.Fatal("done before the path")
			}
		}
		if p, _ := sc.scan(args); p != "f.txt" {
			b.Fatalf("path %q", p)
		}
	}
}
