package fileedit

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// First-try repairs. When no pass finds old, old may still be the
// file's text wrapped or encoded by a slip with one reading. Each slip is
// read on old and, the same way, on new; the reading is used only when the
// repaired old is then found exactly once by the passes, every other
// reading the file holds agrees with it (same place, same replacement),
// and nothing in the file suggests the "slip" is its own content. Anything
// less is refused as before, naming the slip and why.

// typographic is the slip of typographic and ASCII characters; it is read
// against the file (typographicReading), not on old alone.
var typographic = &slip{
	name:   "typographic characters",
	did:    "matching quotes, dashes, ellipses and non-breaking spaces to the file's characters and writing new with them",
	advice: "copy the file's characters exactly",
	hint:   "old's quotes, dashes or spaces differ from the file's (typographic or ASCII): copy the file's characters exactly.",
	marks:  typographicMarks,
}

// reading is old and new read through one slip, and where the repaired old
// is found.
type reading struct {
	slip     *slip
	old, new string
	s        search
	// blocked says why a reading found in the file must not be applied;
	// "" when it may.
	blocked string
	fits    bool // new reads the same way
}

// found reports whether the reading matched somewhere.
func (rd *reading) found() bool { return rd.s.count > 0 }

// usable reports whether the reading may be applied on its own.
func (rd *reading) usable() bool { return rd.s.count == 1 && rd.fits && rd.blocked == "" }

// repair tries the slips on an edit no pass found. It returns the resolved
// edit when exactly one reading applies; otherwise it records what was
// seen, for explainMiss, or refuses an edit that reads two ways.
func (r *resolver) repair(i int, old, new string) (res resolved, ok, refused bool) {
	var seen []*reading
	for _, sl := range slips {
		o, n, l, ok, fits := sl.fix(old, new)
		if !ok || o == old || isBlank(o) {
			continue
		}
		rd := &reading{slip: sl, old: o, new: n, fits: fits}
		rd.s = r.doc.find(o)
		if rd.found() {
			if sl.inFile != nil && sl.inFile(r.doc.text) {
				rd.blocked = "the file itself holds such text, so it may be meant"
			} else if l.lines > 0 {
				rd.blocked = r.trustListing(rd, l)
			}
		}
		seen = append(seen, rd)
	}
	if rd := r.typographicReading(old, new); rd != nil {
		seen = append(seen, rd)
	}
	if r.seen == nil {
		r.seen = map[int][]*reading{}
	}
	r.seen[i] = seen
	// the plausible readings: found in the file, with new read the same
	// way; all must agree on one place and one replacement
	var found []*reading
	for _, rd := range seen {
		if rd.found() && rd.fits {
			found = append(found, rd)
		}
	}
	if len(found) == 0 {
		return resolved{}, false, false
	}
	for _, rd := range found {
		if !rd.usable() {
			return resolved{}, false, false
		}
	}
	first := found[0]
	res = r.replacement(i, first.s, first.new)
	for _, rd := range found[1:] {
		if other := r.replacement(i, rd.s, rd.new); other.start != res.start || other.end != res.end || other.repl != res.repl {
			r.twoWays(i, first.slip.did, res.start, res.end, rd.slip.did, other.start, other.end)
			return resolved{}, false, true
		}
	}
	if did, m, ok := r.nearReading(old, res, seen); ok {
		r.twoWays(i, first.slip.did, res.start, res.end, did, m.start, m.end)
		return resolved{}, false, true
	}
	if why := r.ownCharacters(first, old, res); why != "" {
		first.blocked = why
		return resolved{}, false, false
	}
	res.repair = first.slip
	res.old, res.new = first.old, first.new
	return res, true, false
}

// twoWays refuses an edit whose old reads two ways, naming both places.
func (r *resolver) twoWays(i int, did1 string, s1, e1 int, did2 string, s2, e2 int) {
	r.problem(i, ErrAmbiguous, fmt.Sprintf("old text not found in %s as written, and it reads two ways: after %s it matches %s, after %s it matches %s. Copy the exact lines from the file into old.",
		r.path, did1, r.lineRange(s1, e1), did2, r.lineRange(s2, e2)))
}

// trustListing checks line numbers removed from old against the file:
// numbers that are the real lines of the match are trusted; others (a
// listing read before an earlier edit moved the lines) only for a listing
// of several lines in a file that has no numbered lines of its own, where
// the numbers cannot be content.
func (r *resolver) trustListing(rd *reading, l listing) string {
	// the exact pass matched old's first line, numbered l.first; the
	// others its first non-blank line
	first := r.doc.lineNo(rd.s.matches[0].start)
	lead := 0
	if rd.s.pass != passExact {
		lead = rd.s.lead
	}
	if first == l.first+lead {
		return ""
	}
	if l.lines < 2 {
		return "its number is not the line where that text is"
	}
	if numberedLines(r.doc.text, l.sep) {
		return "the file itself has numbered lines, and the numbers are not the lines where that text is"
	}
	return ""
}

// numberedLines reports whether text has a line that starts like a line of
// a listing with separator sep.
func numberedLines(text, sep string) bool {
	re := numberedLineRe()[sep]
	return re != nil && re.MatchString(text)
}

var numberedLineRe = sync.OnceValue(func() map[string]*regexp.Regexp {
	m := map[string]*regexp.Regexp{}
	for _, sep := range []string{"\t", ":", "|", "│", "→"} {
		m[sep] = regexp.MustCompile(`(?m)^ *L?\d+ ?` + regexp.QuoteMeta(sep))
	}
	return m
})

// typographicReading compares old with the file reading typographic
// characters as ASCII; nil when neither has any.
func (r *resolver) typographicReading(old, new string) *reading {
	text := r.doc.text
	if !hasTypographic(old) && !hasTypographic(text) {
		return nil
	}
	fo := fold(old).text
	if r.folded == nil {
		f := fold(text)
		r.folded = &f
	}
	if fo == old && r.folded.text == text {
		return nil
	}
	fd := doc{text: r.folded.text}
	rd := &reading{slip: typographic, fits: true}
	rd.s = fd.find(fo)
	switch rd.s.count {
	case 0:
		return nil // not this slip: the file differs in more than these characters
	case 1:
	default:
		for k, m := range rd.s.matches { // for the refusal's line numbers
			if at, ok := r.folded.original(m.start); ok {
				rd.s.matches[k].start = at
			}
		}
		return rd
	}
	m := rd.s.matches[0]
	start, ok1 := r.folded.original(m.start)
	end, ok2 := r.folded.original(m.end)
	if !ok1 || !ok2 {
		rd.blocked = "it cuts a character in two"
		return rd
	}
	subs, learned, ok := alignTypographic(old, text[start:end])
	if !ok {
		rd.blocked = "it differs in more than these characters"
		return rd
	}
	rd.old = applySubs(old, subs)
	rd.new = typographicNew(old, rd.old, new, subs, learned)
	s := r.doc.find(rd.old)
	if s.count != 1 || s.matches[0].start != start || s.matches[0].end != end {
		rd.blocked = "it differs in more than these characters"
		return rd
	}
	rd.s = s
	return rd
}

// seenText is what a refusal adds for the slips old showed: the advice of
// each, why it was not repaired, and the repaired old to look for the
// nearest lines with.
func (r *resolver) seenText(i int) (text, near string) {
	var b strings.Builder
	for _, rd := range r.seen[i] {
		b.WriteString(" " + rd.slip.hint)
		why := ""
		switch {
		case rd.s.count == 0:
			why = "read that way, old is not found either"
		case rd.s.count > 1:
			var at []string
			for _, m := range rd.s.matches {
				at = append(at, strconv.Itoa(r.doc.lineNo(m.start)))
			}
			why = "read that way, old matches " + strconv.Itoa(rd.s.count) + " places (lines " + strings.Join(at, ", ") + ")"
		case !rd.fits:
			why = "new does not show it the same way, so its reading is not certain"
		case rd.blocked != "":
			why = rd.blocked
		}
		if why != "" {
			b.WriteString(" (It was not repaired: " + why + ".)")
		}
		if near == "" && rd.old != "" {
			near = rd.old
		}
	}
	return b.String(), near
}
