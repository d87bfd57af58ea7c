package fileedit

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The file's own characters. A repair reads old through a slip and so
// takes the slip's marks out of it: escapes, entities, a fence, line
// numbers, typographic characters. new is read the same way, but a reading
// can miss part of new (new mixes forms, the changed lines are not old's),
// and whatever it misses would be written into the file as the model typed
// it. So before a repaired edit is applied, what it would write is checked
// against the file: a kind of mark the repair took out of old may be
// written only where the file already has it, and the indentation written
// is made of the file's own characters. The check holds whatever the
// reading; a repair that fails it is not applied.

// markCounter counts the marks of a slip in a text, by kind; a kind is
// what the refusal shows ("\\\"", "HTML entities", "curly quotes").
type markCounter func(s string) map[string]int

// substrings counts each of needles as a substring, each its own kind.
func substrings(needles ...string) markCounter {
	return func(s string) map[string]int {
		m := map[string]int{}
		for _, k := range needles {
			if n := strings.Count(s, k); n > 0 {
				m[k] = n
			}
		}
		return m
	}
}

// class counts all of needles as one kind: a file that has none of them
// (the entities of an HTML reading) must not get any.
func class(kind string, needles ...string) markCounter {
	return func(s string) map[string]int {
		n := 0
		for _, k := range needles {
			n += strings.Count(s, k)
		}
		if n == 0 {
			return nil
		}
		return map[string]int{kind: n}
	}
}

// linesLike counts the lines for which is reports true, under one kind.
func linesLike(kind string, is func(line string) bool) markCounter {
	return func(s string) map[string]int {
		n := 0
		for l := range strings.SplitSeq(s, "\n") {
			if is(l) {
				n++
			}
		}
		if n == 0 {
			return nil
		}
		return map[string]int{kind: n}
	}
}

// numberedLine reports whether a line starts like a line of a listing.
func numberedLine(l string) bool {
	_, sep, _, ok := unnumber(l)
	return ok && sep != ""
}

func fenceLine(l string) bool { return fenceOpen().MatchString(l) || fenceClose().MatchString(l) }

// typographicMarks counts the characters the typographic reading
// exchanges, by class: the typographic ones and their ASCII readings, for
// the reading goes both ways. A class, not a character: old's “ read as "
// forbids „ in what is written as much as “. Plain spaces are left out: no
// text is written without them.
func typographicMarks(s string) map[string]int {
	m := map[string]int{}
	for _, r := range s {
		switch {
		case r == '"' || r == '\'':
			m["straight quotes"]++
		case r == '-':
			m["hyphens"]++
		case r < 0x80:
		case foldRune(r) == `"` || foldRune(r) == "'":
			m["curly quotes"]++
		case foldRune(r) == "-":
			m["typographic dashes"]++
		case foldRune(r) == " ":
			m["non-breaking spaces"]++
		case foldRune(r) == "...":
			m["ellipses"]++
		}
	}
	if n := strings.Count(s, "..."); n > 0 {
		m["three dots"] = n
	}
	return m
}

// foreignMarks lists the kinds of marks the repair took out of old (fewer
// in the repaired old than in old) that repl would still write while the
// file's lines at that place (place) have none of them.
func foreignMarks(marks markCounter, old, fixed, repl, place string) []string {
	before, after := marks(old), marks(fixed)
	var written, there map[string]int
	var out []string
	for k, n := range before {
		if n <= after[k] {
			continue
		}
		if written == nil {
			written, there = marks(repl), marks(place)
		}
		if written[k] > 0 && there[k] == 0 {
			out = append(out, showMark(k))
		}
	}
	sort.Strings(out)
	return out
}

// foreignIndent returns a character that indents a line of repl while no
// line of place is indented with it: indentation is the file's (spaces,
// tabs), re-derived from the repaired text, never the model's NBSPs.
func foreignIndent(repl, place string) (rune, bool) {
	own := map[rune]bool{' ': true, '\t': true}
	eachIndent(place, func(r rune) bool { own[r] = true; return true })
	var bad rune
	found := false
	eachIndent(repl, func(r rune) bool {
		if !own[r] {
			bad, found = r, true
		}
		return !found
	})
	return bad, found
}

// eachIndent calls f with every character of the indentation of every line
// of s (Unicode spaces, NBSP included), until f returns false.
func eachIndent(s string, f func(rune) bool) {
	for l := range strings.SplitSeq(s, "\n") {
		for _, r := range l {
			if !unicode.IsSpace(r) {
				break
			}
			if !f(r) {
				return
			}
		}
	}
}

// showMark renders a kind of mark for a message: invisible characters by
// their code point.
func showMark(k string) string {
	if r, n := utf8.DecodeRuneInString(k); n == len(k) && unicode.IsSpace(r) {
		return fmt.Sprintf("U+%04X", r)
	}
	return k
}

// ownCharacters checks what a repaired edit would write (repl, at res)
// against the file; it returns why the repair must not be applied, "" when
// it may.
func (r *resolver) ownCharacters(rd *reading, old string, res resolved) string {
	place := r.linesAround(res.start, res.end)
	if bad := foreignMarks(rd.slip.marks, old, rd.old, res.repl, place); len(bad) > 0 {
		return "new would still write " + strings.Join(bad, " ") + " where " + r.path + " has none, so new does not read the same way as old"
	}
	if c, ok := foreignIndent(res.repl, place); ok {
		return fmt.Sprintf("new would indent lines with %s, which %s does not use there", showMark(string(c)), r.path)
	}
	return ""
}

// linesAround is the text of the whole lines that hold the region
// [start, end) of the normalized text.
func (r *resolver) linesAround(start, end int) string {
	text := r.doc.text
	ls := strings.LastIndexByte(text[:start], '\n') + 1
	le := len(text)
	from := max(end, ls)
	if from > start && text[from-1] == '\n' {
		from-- // the region closes its last line
	}
	if k := strings.IndexByte(text[from:], '\n'); k >= 0 {
		le = from + k
	}
	return text[ls:le]
}
