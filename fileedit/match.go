package fileedit

import (
	"strings"
)

// pass names how old was found. Passes run strictest first and the
// first one that finds anything wins, so text present verbatim is never
// matched another way.
type pass int

const (
	passNone pass = iota
	// passExact: old is in the file byte for byte (after BOM/CRLF
	// normalization).
	passExact
	// passEdges: old minus its leading and trailing blank lines is in the
	// file verbatim, or old is a single line found ignoring its indentation
	// (and its trailing spaces).
	passEdges
	// passIndent: old is a block of lines found comparing each line without
	// its leading and trailing whitespace.
	passIndent
)

// maxListed bounds how many matches are remembered for a message.
const maxListed = 8

// maxCounted stops the search for more matches: past it the answer is the
// same ("not unique") and an old like "a" in a huge file of a's must not
// cost a pass per byte.
const maxCounted = 1000

// match is one place where old was found, as a region of the normalized
// text.
type match struct {
	start, end int
	// firstLine is the 0-based line of the first matched line; used by the
	// re-indentation of passEdges (single line) and passIndent.
	firstLine int
	// nl is set when the region ends with the "\n" that closes its last
	// line: old ended with a line end that the loose pass kept apart.
	nl bool
}

// search is the result of looking for one old text.
type search struct {
	pass    pass
	matches []match // at most maxListed
	count   int
	edges
	// reindent is set when the match ignored indentation, so new must be
	// rewritten into the file's indentation.
	reindent bool
}

// full reports whether counting further would change nothing.
func (s *search) full() bool { return s.count >= maxCounted }

func (s *search) add(m match) {
	if len(s.matches) < maxListed {
		s.matches = append(s.matches, m)
	}
	s.count++
}

// find runs the three passes for old in d, strictest first.
func (d *doc) find(old string) search {
	if s := d.findExact(old); s.count > 0 {
		return s
	}
	e := trimEdges(old)
	if e.core == "" {
		return search{}
	}
	s := search{edges: e}
	if e.lead > 0 || e.tail() {
		d.findCore(&s)
		if s.count > 0 {
			return s
		}
	}
	if !strings.Contains(e.core, "\n") {
		d.findLine(&s)
	} else {
		d.findBlock(&s)
	}
	return s
}

// findExact lists every occurrence of old, overlapping ones included: "aa"
// twice in "aaa" is as ambiguous as two separate lines.
func (d *doc) findExact(old string) search {
	s := search{pass: passExact, edges: edges{core: old}}
	for from := 0; from <= len(d.text)-len(old) && !s.full(); {
		i := strings.Index(d.text[from:], old)
		if i < 0 {
			break
		}
		at := from + i
		s.add(match{start: at, end: at + len(old)})
		from = at + 1
	}
	return s
}

// findCore looks for old without its blank edge lines. Removing a blank
// line at an edge says the model meant a line boundary there, so the match
// must start at a line start (lead) or end at a line end (trail).
func (d *doc) findCore(s *search) {
	s.pass = passEdges
	text, core := d.text, s.core
	for from := 0; from <= len(text)-len(core) && !s.full(); {
		i := strings.Index(text[from:], core)
		if i < 0 {
			break
		}
		at := from + i
		end := at + len(core)
		from = at + 1
		if s.lead > 0 && at > 0 && text[at-1] != '\n' {
			continue
		}
		if s.tail() && end < len(text) && text[end] != '\n' {
			continue
		}
		s.add(s.closeLine(d, match{start: at, end: end}))
	}
}

// findLine looks for a single-line old ignoring its indentation: the text
// must follow only spaces and tabs on its line. Trailing spaces in old (or
// a dropped final newline) mean the model gave the whole line, so the match
// must then reach the end of the line, trailing spaces aside.
func (d *doc) findLine(s *search) {
	body := strings.TrimLeft(s.core, " \t")
	trimmed := strings.TrimRight(body, " \t")
	toEOL := s.tail() || trimmed != body
	body = trimmed
	if body == "" {
		return
	}
	s.pass, s.reindent = passEdges, true
	text := d.text
	// from is always a line start, and at most the first occurrence on a
	// line can follow its indentation (body starts with a non-blank), so
	// each line is looked at once: linear even on a pathological file.
	for from := 0; from <= len(text)-len(body) && !s.full(); {
		i := strings.Index(text[from:], body)
		if i < 0 {
			break
		}
		at := from + i
		ls := from + strings.LastIndexByte(text[from:at], '\n') + 1
		le := strings.IndexByte(text[at:], '\n')
		if le < 0 {
			le = len(text)
		} else {
			le += at
		}
		from = le + 1
		end := at + len(body)
		if strings.TrimLeft(text[ls:at], " \t") != "" {
			continue
		}
		if toEOL {
			if strings.TrimRight(text[end:le], " \t") != "" {
				continue
			}
			end = le
		}
		s.add(s.closeLine(d, match{start: ls, end: end, firstLine: d.lineOf(ls)}))
	}
	if s.count == 0 {
		s.pass, s.reindent = passNone, false
	}
}

// findBlock looks for a multi-line old comparing whole lines without their
// leading and trailing whitespace. Blank lines inside old must be blank in
// the file too: only indentation is forgiven, not content.
func (d *doc) findBlock(s *search) {
	want := strings.Split(s.core, "\n")
	for i := range want {
		want[i] = trimSpace(want[i])
	}
	n := d.numLines()
	for i := 0; i+len(want) <= n && !s.full(); i++ {
		if trimSpace(d.line(i)) != want[0] {
			continue
		}
		ok := true
		for j := 1; j < len(want); j++ {
			if trimSpace(d.line(i+j)) != want[j] {
				ok = false
				break
			}
		}
		if ok {
			s.add(s.closeLine(d, match{start: d.lineStarts()[i], end: d.lineEnd(i + len(want) - 1), firstLine: i}))
		}
	}
	if s.count > 0 {
		s.pass, s.reindent = passIndent, true
	}
}

// closeLine extends a region that ends a line over its "\n" when old ended
// with a line end, so that old "foo()\n" with new "" deletes the line.
func (s *search) closeLine(d *doc, m match) match {
	if s.tail() && m.end < len(d.text) && d.text[m.end] == '\n' {
		m.end++
		m.nl = true
	}
	return m
}

// edges is old split into its core and the blank lines around it: small
// models add or drop a blank line at the start or end of old, and end it
// with a newline or not.
type edges struct {
	core  string
	lead  int  // blank lines removed before core
	trail int  // blank lines removed after core, final line end aside
	term  bool // old ended with "\n"
}

// tail reports whether old ended with a line end: the match must then end
// a line.
func (e edges) tail() bool { return e.term || e.trail > 0 }

// trimEdges removes the blank lines at both edges of old and its final
// "\n": "\n\tfoo()\n\n" gives core "\tfoo()", lead 1, trail 1, term.
func trimEdges(s string) edges {
	var e edges
	if strings.HasSuffix(s, "\n") {
		s, e.term = s[:len(s)-1], true
	}
	lines := strings.Split(s, "\n")
	for len(lines) > 1 && isBlank(lines[0]) {
		lines = lines[1:]
		e.lead++
	}
	for len(lines) > 1 && isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
		e.trail++
	}
	if len(lines) == 1 && isBlank(lines[0]) {
		return e
	}
	e.core = strings.Join(lines, "\n")
	return e
}

// trimLike removes from new at most as many blank edge lines as were
// removed from old, so that the lines the model meant to keep around its
// change are neither doubled nor lost. It returns new's lines and whether
// new ended with a line end (when old did, the final "\n" of new is its
// line end, not an added blank line).
func (e edges) trimLike(new string) (lines []string, term bool) {
	if e.tail() && strings.HasSuffix(new, "\n") {
		new, term = new[:len(new)-1], true
	}
	lines = strings.Split(new, "\n")
	for n := e.lead; n > 0 && len(lines) > 1 && isBlank(lines[0]); n-- {
		lines = lines[1:]
	}
	for n := e.trail; n > 0 && len(lines) > 1 && isBlank(lines[len(lines)-1]); n-- {
		lines = lines[:len(lines)-1]
	}
	return lines, term
}
