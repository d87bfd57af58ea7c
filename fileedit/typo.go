package fileedit

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Typographic characters and their ASCII readings: a model that
// "prettifies" quotes, or writes ASCII where the file has curly quotes,
// copied the text right otherwise. old is compared with the file modulo
// these, and new is written with the file's characters.

// foldRune returns the ASCII reading of a typographic rune, "" for others.
func foldRune(r rune) string {
	switch r {
	case '\u201c', '\u201d', '\u201e', '\u201f':
		return `"`
	case '\u2018', '\u2019', '\u201a', '\u201b':
		return "'"
	case '\u00a0', '\u202f', '\u2007', '\u2009':
		return " "
	case '\u2010', '\u2011', '\u2013', '\u2014', '\u2212':
		return "-"
	case '\u2026':
		return "..."
	}
	return ""
}

// hasTypographic reports cheaply whether s may hold a rune foldRune reads:
// all of them are NBSP or start with the bytes 0xE2 0x80 or 0xE2 0x88.
func hasTypographic(s string) bool {
	return strings.Contains(s, "\u00a0") || strings.Contains(s, "\xe2\x80") || strings.Contains(s, "\u2212")
}

// foldMark records one folded rune, to map offsets of the folded text back.
type foldMark struct {
	at, flen int // offset and length in the folded text
	orig     int // offset in the original text
	olen     int // length in the original text
}

// foldedText is a text with its typographic runes read as ASCII.
type foldedText struct {
	text  string
	marks []foldMark
}

func fold(s string) foldedText {
	if !hasTypographic(s) {
		return foldedText{text: s}
	}
	var b strings.Builder
	b.Grow(len(s))
	var marks []foldMark
	for i, r := range s {
		f := ""
		if r >= 0xa0 {
			f = foldRune(r)
		}
		if f == "" {
			if r == utf8.RuneError {
				_, w := utf8.DecodeRuneInString(s[i:])
				b.WriteString(s[i : i+w])
			} else {
				b.WriteRune(r)
			}
			continue
		}
		marks = append(marks, foldMark{at: b.Len(), flen: len(f), orig: i, olen: utf8.RuneLen(r)})
		b.WriteString(f)
	}
	return foldedText{text: b.String(), marks: marks}
}

// original maps an offset of the folded text to the original; false when
// it falls inside the reading of one rune ("…" read as "...").
func (f foldedText) original(off int) (int, bool) {
	k := sort.Search(len(f.marks), func(i int) bool { return f.marks[i].at >= off })
	// marks[:k] start before off
	if k > 0 {
		m := f.marks[k-1]
		if off < m.at+m.flen {
			return 0, false
		}
		return m.orig + m.olen + off - (m.at + m.flen), true
	}
	return off, true
}

// unit is one rune of a text as the typographic comparison sees it.
type unit struct {
	f          string // its ASCII reading, or the rune itself
	start, end int    // bytes in the text
}

func isSpaceFold(f string) bool {
	return f == " " || f == "\t" || f == "\n" || f == "\r" || f == "\v" || f == "\f"
}

// units splits s into its non-blank runes (read as ASCII) and the blank
// runs between them, gaps[k] being the run before units[k].
func units(s string) (us []unit, gaps []string) {
	gap := 0
	for i, r := range s {
		w := utf8.RuneLen(r)
		if r == utf8.RuneError {
			_, w = utf8.DecodeRuneInString(s[i:])
		}
		f := foldRune(r)
		if f == "" {
			f = s[i : i+w]
		}
		if isSpaceFold(f) {
			continue
		}
		gaps = append(gaps, s[gap:i])
		us = append(us, unit{f: f, start: i, end: i + w})
		gap = i + w
	}
	return us, gaps
}

// sub replaces old[start:end] by text.
type sub struct {
	start, end int
	text       string
}

// alignTypographic lists the replacements that turn old into the file's
// characters, old and region differing only in whitespace and in the
// characters foldRune reads alike; ok is false when they differ otherwise.
// learned maps each of old's characters that differ to the file's ones, and
// each typographic space of old to the file's character at its place.
func alignTypographic(old, region string) (subs []sub, learned map[string]map[string]bool, ok bool) {
	a, ga := units(old)
	b, gb := units(region)
	learned = map[string]map[string]bool{}
	learn := func(from, to string) {
		if learned[from] == nil {
			learned[from] = map[string]bool{}
		}
		learned[from][to] = true
	}
	// gap reads the blank run of old that starts at start against the
	// file's one at its place
	gap := func(start int, g1, g2 string) {
		if g1 == g2 {
			learnSpaces(g1, g2, learn)
			return
		}
		switch f1 := fold(g1).text; {
		case f1 == fold(g2).text:
			// an NBSP where the file has a space: the file's characters
			subs = append(subs, sub{start, start + len(g1), g2})
			learnSpaces(g1, g2, learn)
		case f1 != g1:
			// typographic spaces in a run the file writes otherwise (its
			// own indentation): read as ASCII, and the passes forgive the
			// rest as they forgive any indentation
			subs = append(subs, sub{start, start + len(g1), f1})
			learnSpaces(g1, f1, learn)
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		gi, gj := i, j
		la, lb := len(a[i].f), len(b[j].f)
		fa, fb := a[i].f, b[j].f
		i, j = i+1, j+1
		for la != lb {
			if la < lb {
				if i == len(a) {
					return nil, nil, false
				}
				la += len(a[i].f)
				fa += a[i].f
				i++
			} else {
				if j == len(b) {
					return nil, nil, false
				}
				lb += len(b[j].f)
				fb += b[j].f
				j++
			}
		}
		if fa != fb {
			return nil, nil, false
		}
		os, oe := a[gi].start, a[i-1].end
		rs, re := b[gj].start, b[j-1].end
		gs := 0
		if gi > 0 {
			gs = a[gi-1].end
		}
		gap(gs, ga[gi], gb[gj])
		if old[os:oe] != region[rs:re] {
			subs = append(subs, sub{os, oe, region[rs:re]})
			learn(old[os:oe], region[rs:re])
		}
	}
	if i != len(a) || j != len(b) {
		return nil, nil, false
	}
	if len(a) > 0 {
		end := a[len(a)-1].end
		gap(end, old[end:], region[b[len(b)-1].end:])
	}
	return subs, learned, true
}

// learnSpaces records, for each typographic space of g1, the character at
// its place in g2 (the same count of characters: each folds to one space).
func learnSpaces(g1, g2 string, learn func(from, to string)) {
	if !hasTypographic(g1) {
		return
	}
	r2 := []rune(g2)
	for k, r := range []rune(g1) {
		if k < len(r2) && foldRune(r) != "" {
			learn(string(r), string(r2[k]))
		}
	}
}

// applySubs applies sorted, disjoint replacements to s.
func applySubs(s string, subs []sub) string {
	var b strings.Builder
	last := 0
	for _, x := range subs {
		b.WriteString(s[last:x.start])
		b.WriteString(x.text)
		last = x.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// typographicNew writes new with the file's characters: the text new
// shares with old at its start and end is taken from old as the file has
// it (fixed), and the characters of the changed middle that old showed
// differently in the file are converted the same way — a straight quote
// becomes an opening or closing one by its place.
func typographicNew(old, fixed, new string, subs []sub, learned map[string]map[string]bool) string {
	p := 0
	for p < len(old) && p < len(new) && old[p] == new[p] {
		p++
	}
	for p > 0 && p < len(old) && !utf8.RuneStart(old[p]) {
		p--
	}
	s := 0
	for s < len(old)-p && s < len(new)-p && old[len(old)-1-s] == new[len(new)-1-s] {
		s++
	}
	e := len(old) - s
	for e < len(old) && !utf8.RuneStart(old[e]) {
		e++
	}
	for _, x := range subs {
		if x.start < p && p < x.end {
			p = x.start
		}
		if x.start < e && e < x.end {
			e = x.end
		}
	}
	mid := new[p : len(new)-(len(old)-e)]
	shift := func(off int) int {
		d := 0
		for _, x := range subs {
			if x.end <= off {
				d += len(x.text) - (x.end - x.start)
			}
		}
		return off + d
	}
	head := fixed[:shift(p)]
	var b strings.Builder
	b.WriteString(head)
	prev, _ := utf8.DecodeLastRuneInString(head)
	// indent is set while mid is in the indentation of a line
	indent := trimSpace(head[strings.LastIndexByte(head, '\n')+1:]) == ""
	for i := 0; i < len(mid); {
		if strings.HasPrefix(mid[i:], "...") {
			if t := only(learned["..."]); t != "" {
				b.WriteString(t)
				i += 3
				prev, indent = '.', false
				continue
			}
		}
		r, w := utf8.DecodeRuneInString(mid[i:])
		c := mid[i : i+w]
		out := c
		ts := learned[c]
		switch space := isSpaceFold(foldRune(r)); {
		case len(ts) == 1:
			out = only(ts)
		case space && indent:
			// indentation is the file's: plain spaces, which the
			// re-indentation converts to its own
			out = foldRune(r)
		case len(ts) == 2:
			out = quoteFor(ts, prev, c)
		}
		if r == '\n' {
			indent = true
		} else if !isSpaceFold(out) {
			indent = false
		}
		b.WriteString(out)
		prev = r
		i += w
	}
	b.WriteString(fixed[shift(e):])
	return b.String()
}

// only returns the single member of a set, "" otherwise.
func only(set map[string]bool) string {
	if len(set) != 1 {
		return ""
	}
	for k := range set {
		return k
	}
	return ""
}

// quoteFor picks the opening or the closing quote of a pair learned for c:
// opening after a blank or an opening bracket, closing elsewhere.
func quoteFor(set map[string]bool, prev rune, c string) string {
	pairs := [][2]string{{"\u201c", "\u201d"}, {"\u2018", "\u2019"}}
	for _, p := range pairs {
		if set[p[0]] && set[p[1]] {
			if prev == utf8.RuneError || prev == ' ' || prev == '\t' || prev == '\n' || prev == '(' || prev == '[' || prev == '{' {
				return p[0]
			}
			return p[1]
		}
	}
	return c
}
