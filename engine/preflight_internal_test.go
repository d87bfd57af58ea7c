package engine

import "testing"

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
