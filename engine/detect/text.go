package detect

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// thousands writes n with comma separators (6,000), as notes quote sizes.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// clip shortens s to about n bytes, cutting on a rune boundary and marking
// the cut with an ellipsis.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// excerpt keeps the head and the tail of a long text, so a note can quote
// what the model wrote without dumping a whole file back at it.
func excerpt(s string, head, tail int) string {
	if len(s) <= head+tail+20 {
		return s
	}
	h := head
	for h > 0 && !utf8.RuneStart(s[h]) {
		h--
	}
	t := len(s) - tail
	for t < len(s) && !utf8.RuneStart(s[t]) {
		t++
	}
	return s[:h] + "\n[… " + thousands(t-h) + " bytes cut …]\n" + s[t:]
}

// list joins names as "a, b, c".
func list(names []string) string { return strings.Join(names, ", ") }

// oneLine makes a fragment of model output quotable inside a one-line
// note: valid UTF-8, newlines and tabs written as \n and \t, other control
// bytes dropped.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < ' ' || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
