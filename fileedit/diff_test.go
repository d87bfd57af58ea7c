package fileedit

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{
			name: "identical",
			old:  "a\n", new: "a\n",
			want: "",
		},
		{
			name: "numbers: removed lines by old, kept and added lines by new",
			old:  "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
			new:  "1\n2\n3\n4\nfive\nfive-b\n6\n7\n8\n9\n10\n",
			want: `--- f.txt
+++ f.txt
@@ -3,5 +3,6 @@
  3  3
  4  4
- 5  5
+ 5  five
+ 6  five-b
  7  6
  8  7
`,
		},
		{
			name: "new file",
			old:  "", new: "a\nb\n",
			want: "--- f.txt\n+++ f.txt\n@@ -0,0 +1,2 @@\n+1  a\n+2  b\n",
		},
		{
			name: "no newline at end",
			old:  "a\nb", new: "a\nc",
			want: "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n 1  a\n-2  b\n\\ No newline at end of file\n+2  c\n\\ No newline at end of file\n",
		},
		{
			name: "only line endings",
			old:  "a\r\nb\r\n", new: "a\nb\n",
			want: "--- f.txt\n+++ f.txt\n(only the BOM or the line endings changed)\n",
		},
		{
			name: "CRLF file shows only its real change",
			old:  "\ufeffa\r\nb\r\n", new: "\ufeffa\r\nc\r\n",
			want: "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n 1  a\n-2  b\n+2  c\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diff("f.txt", []byte(tt.old), []byte(tt.new)); got != tt.want {
				t.Errorf("Diff =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestApplyLocations checks where Outcome.Edits says each edit landed: the
// lines of the new text in the new content, in call order.
func TestApplyLocations(t *testing.T) {
	src := "a\nb\nc\nd\ne\n"
	o, err := ApplyFile("", []byte(src), []Edit{
		{Old: "d\n", New: "d1\nd2\nd3\n"},
		{Old: "b\n", New: ""},
		{Old: "a", New: "A"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(o.Content); got != "A\nc\nd1\nd2\nd3\ne\n" {
		t.Fatalf("content = %q", got)
	}
	want := []Applied{{Line: 3, EndLine: 5}, {Line: 2, EndLine: 1}, {Line: 1, EndLine: 1}}
	for i, w := range want {
		if o.Edits[i] != w {
			t.Errorf("edit %d at %+v, want %+v", i+1, o.Edits[i], w)
		}
	}
}

func TestApplyNoEdits(t *testing.T) {
	_, err := ApplyFile("a.go", []byte("x"), nil)
	if err == nil || !strings.Contains(err.Error(), "no edits given") {
		t.Fatalf("err = %v", err)
	}
}

func TestApplyDefaultName(t *testing.T) {
	_, err := ApplyFile("", []byte("x\n"), []Edit{{Old: "y", New: "z"}})
	if err == nil || !strings.Contains(err.Error(), "not found in the file") {
		t.Fatalf("err = %v", err)
	}
}

// TestApplyHugeAmbiguity: an old that occurs on every line, or at every
// byte, of a large file is refused quickly, with a bounded count.
func TestApplyHugeAmbiguity(t *testing.T) {
	_, err := ApplyFile("", []byte(strings.Repeat("a\n", 1<<19)), []Edit{{Old: "  a", New: "b"}})
	if err == nil || !strings.Contains(err.Error(), "at least 1000 places") || !strings.Contains(err.Error(), "ignoring whitespace") {
		t.Fatalf("err = %v", err)
	}
	src := []byte(strings.Repeat("a", 1<<20))
	if err == nil || !strings.Contains(err.Error(), "at least 1000 places") {
		t.Fatalf("err = %v", err)
	}
	_, err = ApplyFile("", src, []Edit{{Old: "a", New: "b"}})
	if err == nil || !strings.Contains(err.Error(), "at least 1000 places") {
		t.Fatalf("err = %v", err)
	}
}
