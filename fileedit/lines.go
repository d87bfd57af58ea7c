package fileedit

import (
	"sort"
	"strings"
)

// doc indexes the lines of a normalized text. Line starts are computed only
// when a pass or a message needs them: an exact one-line edit in a large
// file never pays for them.
type doc struct {
	text   string
	starts []int // offset of the first byte of each line
}

func (d *doc) lineStarts() []int {
	if d.starts == nil {
		n := strings.Count(d.text, "\n")
		d.starts = make([]int, 1, n+1)
		for i := 0; i < len(d.text); {
			j := strings.IndexByte(d.text[i:], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			d.starts = append(d.starts, i)
		}
	}
	return d.starts
}

// numLines counts lines; a final "\n" does not open a new line.
func (d *doc) numLines() int {
	s := d.lineStarts()
	if len(s) > 1 && s[len(s)-1] == len(d.text) {
		return len(s) - 1
	}
	return len(s)
}

// line returns line i (0-based) without its "\n".
func (d *doc) line(i int) string {
	s := d.lineStarts()
	start := s[i]
	end := len(d.text)
	if i+1 < len(s) {
		end = s[i+1] - 1
	}
	return d.text[start:end]
}

// lineEnd is the offset of the "\n" ending line i, or len(text).
func (d *doc) lineEnd(i int) int {
	s := d.lineStarts()
	if i+1 < len(s) {
		return s[i+1] - 1
	}
	return len(d.text)
}

// lineOf returns the 0-based line holding offset off.
func (d *doc) lineOf(off int) int {
	s := d.lineStarts()
	return sort.Search(len(s), func(i int) bool { return s[i] > off }) - 1
}

// lineNo is the 1-based line number of offset off, for messages.
func (d *doc) lineNo(off int) int { return d.lineOf(off) + 1 }

// isBlank reports whether s holds only whitespace.
func isBlank(s string) bool { return trimSpace(s) == "" }

// asciiSpace is the whitespace the loose passes forgive. Other space
// characters (NBSP, thin spaces) are not indentation: a model that writes
// them slipped, and the typographic repair reads them, so that they are
// never written where the file has plain spaces.
var asciiSpace = [256]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

// trimSpace removes the ASCII whitespace around s.
func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && asciiSpace[s[i]] {
		i++
	}
	for j > i && asciiSpace[s[j-1]] {
		j--
	}
	return s[i:j]
}

// indentOf returns the leading spaces and tabs of s.
func indentOf(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}
