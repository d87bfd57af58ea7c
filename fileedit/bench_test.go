package fileedit

import (
	"fmt"
	"strings"
	"testing"
)

// bigFile builds about size bytes of tab-indented Go-like code with unique
// lines, and returns one of its lines from the middle.
func bigFile(size int) ([]byte, string) {
	var b strings.Builder
	var middle string
	for i := 0; b.Len() < size; i++ {
		line := fmt.Sprintf("\tvalue%d := compute(%d, \"some text to make the line longer\")\n", i, i)
		if middle == "" && b.Len() >= size/2 {
			middle = strings.TrimSuffix(line, "\n")
		}
		b.WriteString(line)
	}
	return []byte(b.String()), middle
}

// BenchmarkApply is a one-line exact edit in a 1 MiB file: the common case
// of every edit_file call.
func BenchmarkApply(b *testing.B) {
	content, line := bigFile(1 << 20)
	edits := []Edit{{Old: line, New: line + " // changed"}}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyFile("", content, edits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyLoose is the same edit written with spaces for tabs, so it
// goes through the single-line loose pass and re-indentation.
func BenchmarkApplyLoose(b *testing.B) {
	content, line := bigFile(1 << 20)
	old := "    " + strings.TrimPrefix(line, "\t")
	edits := []Edit{{Old: old, New: old + " // changed"}}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyFile("", content, edits); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyMiss is a mistyped one-line old in a 1 MiB file: all passes
// fail and the nearest lines are searched.
func BenchmarkApplyMiss(b *testing.B) {
	content, line := bigFile(1 << 20)
	edits := []Edit{{Old: strings.Replace(line, "compute", "compte", 1), New: "x"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ApplyFile("", content, edits); err == nil {
			b.Fatal("applied a mistyped old")
		}
	}
}

// BenchmarkDiff is the numbered diff of that one-line edit.
func BenchmarkDiff(b *testing.B) {
	content, line := bigFile(1 << 20)
	o, err := ApplyFile("", content, []Edit{{Old: line, New: line + " // changed"}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Diff("big.go", content, o.Content)
	}
}

// BenchmarkApplyRepair is a one-line edit in a 1 MiB file whose old and
// new carry read_file's line number: all passes fail, the slips are tried
// and the line-number reading applies.
func BenchmarkApplyRepair(b *testing.B) {
	content, line := bigFile(1 << 20)
	n := strings.Count(string(content[:strings.Index(string(content), line)]), "\n") + 1
	prefix := fmt.Sprintf("%d\t", n)
	edits := []Edit{{Old: prefix + line, New: prefix + line + " // changed"}}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		o, err := ApplyFile("", content, edits)
		if err != nil || o.Edits[0].Repair == "" {
			b.Fatal(o.Summary, err)
		}
	}
}
