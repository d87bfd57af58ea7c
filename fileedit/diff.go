package fileedit

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// diffContext is the number of unchanged lines kept around a change: enough
// for the model to see where its edit landed, few enough to stay compact.
const diffContext = 2

// Diff renders a compact unified diff of old → new in which every line
// carries its line number: removed lines their number in old, kept and
// added lines their number in new — the numbers the model will see when it
// reads the file again. It is the proof returned to the model after an edit
// and what a human reads in line mode. Both sides are compared without
// BOM and with LF endings, so a CRLF file shows only its real changes; a
// change of BOM or line endings alone is said in one line. Identical
// contents give "".
func Diff(path string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := decode(old), decode(new)
	if a.text == b.text {
		return "--- " + path + "\n+++ " + path + "\n(only the BOM or the line endings changed)\n"
	}
	edits := udiff.Lines(a.text, b.text)
	u, err := udiff.ToUnifiedDiff(path, path, a.text, edits, diffContext)
	if err != nil {
		// Lines produces consistent edits; fall back to the plain form
		// rather than fail the caller.
		return udiff.Unified(path, path, a.text, b.text)
	}
	maxLine := max(strings.Count(a.text, "\n"), strings.Count(b.text, "\n")) + 1
	w := len(strconv.Itoa(maxLine))
	var out strings.Builder
	out.WriteString("--- " + path + "\n+++ " + path + "\n")
	for _, h := range u.Hunks {
		from, to := 0, 0
		for _, l := range h.Lines {
			if l.Kind != udiff.Insert {
				from++
			}
			if l.Kind != udiff.Delete {
				to++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(h.FromLine, from), hunkRange(h.ToLine, to))
		oldNo, newNo := h.FromLine, h.ToLine
		for _, l := range h.Lines {
			var mark byte
			var no int
			switch l.Kind {
			case udiff.Delete:
				mark, no = '-', oldNo
				oldNo++
			case udiff.Insert:
				mark, no = '+', newNo
				newNo++
			default:
				mark, no = ' ', newNo
				oldNo++
				newNo++
			}
			fmt.Fprintf(&out, "%c%*d  %s", mark, w, no, l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return out.String()
}

// hunkRange writes a hunk header range the way diff -u does.
func hunkRange(start, n int) string {
	switch {
	case n == 1:
		return strconv.Itoa(start)
	case n == 0:
		return strconv.Itoa(max(start-1, 0)) + ",0"
	}
	return strconv.Itoa(start) + "," + strconv.Itoa(n)
}
