package fileedit

import (
	"encoding/json"
	"strings"
)

// Near readings. A repair reads old one slip away from what it is.
// Before one is applied, the other readings one transform away are looked
// for too — the other slips, and each slip undone the other way: escapes
// added to old as well as dropped, entities encoded as well as decoded,
// line numbers the file has rather than old. The typographic reading needs
// no inverse: it compares both sides with their typographic characters
// read as ASCII, so it straightens and curls alike; a fence needs none
// either: old without a fence that the file has fenced is in the file as
// it is. When another reading matches somewhere else, the model's old is
// one slip from two places and the edit is refused, naming both.

// inverse is a slip undone the other way: old read as the model having
// removed the slip's marks from the file's text.
type inverse struct {
	// did says what the reading did, for the refusal: "writing each " of
	// old as \"".
	did string
	// needs is text the file must hold for the reading to match anything;
	// a cheap test that spares a search of a large file.
	needs string
	// read gives old read that way; false when it would not change old.
	read func(old string) (string, bool)
}

// inverses are the slips undone the other way.
var inverses = []inverse{
	{did: `turning the line breaks and tabs of old into the two characters \n and \t`, needs: `\`, read: escapeNT},
	{did: `turning the tabs that start old's lines into the two characters \t`, needs: `\t`, read: escapeLeadingTabs},
	{did: "doubling the backslashes of old", needs: `\\`, read: func(s string) (string, bool) {
		return strings.ReplaceAll(s, `\`, `\\`), strings.Contains(s, `\`)
	}},
	{did: `writing each " of old as \"`, needs: `\"`, read: escapeQuotes},
	{did: "escaping old as the body of a JSON string", needs: `\`, read: jsonEscape},
	{did: "writing the <, > and & of old as HTML entities", needs: "&", read: encodeEntities(false)},
	{did: `writing the <, >, & and " of old as HTML entities`, needs: "&", read: encodeEntities(true)},
}

// listedDid is the inverse of the line-number slip, which is not one text
// to look for: old as the text of numbered lines of the file (findListed).
const listedDid = "reading old as lines of a numbered listing in the file"

// nearReading looks for a reading of old, other than the one about to be
// applied at res, that matches somewhere else: one of the readings already
// seen (a slip new does not show the same way), or an inverse. It returns
// what that reading did and where it matches.
func (r *resolver) nearReading(old string, res resolved, seen []*reading) (did string, at match, ok bool) {
	elsewhere := func(s search) (match, bool) {
		for _, m := range s.matches {
			if r.lineSpan(m.start, m.end) != r.lineSpan(res.start, res.end) {
				return m, true
			}
		}
		return match{}, false
	}
	for _, rd := range seen {
		if rd.found() && rd.slip != typographic { // the typographic matches are offsets of the folded text
			if m, ok := elsewhere(rd.s); ok {
				return rd.slip.did, m, true
			}
		}
	}
	for _, inv := range inverses {
		if inv.needs != "" && !r.fileHas(inv.needs) {
			continue
		}
		if o, ok := inv.read(old); ok && o != old {
			if m, ok := elsewhere(r.doc.find(o)); ok {
				return inv.did, m, true
			}
		}
	}
	if numbered(old) {
		return "", match{}, false // its numbers are read the other way already
	}
	if m, ok := elsewhere(r.doc.findListed(old)); ok {
		return listedDid, m, true
	}
	return "", match{}, false
}

// fileHas reports whether the file holds s, remembered per call: the same
// few needles are asked for every repaired edit.
func (r *resolver) fileHas(s string) bool {
	if v, ok := r.has[s]; ok {
		return v
	}
	if r.has == nil {
		r.has = map[string]bool{}
	}
	// most files have no backslash at all: one fast scan answers for all
	// the escapes
	v := (len(s) == 1 || r.fileHas(s[:1])) && strings.Contains(r.doc.text, s)
	r.has[s] = v
	return v
}

// lineSpan is the first and last line (0-based) of a region, a final line
// end aside.
func (r *resolver) lineSpan(start, end int) [2]int {
	a := r.doc.lineOf(start)
	if end > start {
		return [2]int{a, r.doc.lineOf(end - 1)}
	}
	return [2]int{a, a}
}

// escapeNT writes the line breaks and tabs of old as \n and \t, the way an
// interpreted string literal holds them; a final line end is old's own.
func escapeNT(s string) (string, bool) {
	s = strings.TrimSuffix(s, "\n")
	if !strings.ContainsAny(s, "\n\t") {
		return "", false
	}
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s), true
}

// escapeLeadingTabs writes the tabs that start lines as \t.
func escapeLeadingTabs(s string) (string, bool) {
	lines := strings.Split(s, "\n")
	seen := false
	for i, l := range lines {
		t := len(l) - len(strings.TrimLeft(l, "\t"))
		if t > 0 {
			lines[i] = strings.Repeat(`\t`, t) + l[t:]
			seen = true
		}
	}
	return strings.Join(lines, "\n"), seen
}

// escapeQuotes writes every quote that no backslash escapes as \".
func escapeQuotes(s string) (string, bool) {
	var b strings.Builder
	seen, slashes := false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' && slashes%2 == 0 {
			b.WriteByte('\\')
			seen = true
		}
		if c == '\\' {
			slashes++
		} else {
			slashes = 0
		}
		b.WriteByte(c)
	}
	return b.String(), seen
}

// jsonEscape writes old as the body of a JSON string, as a file holding
// code inside JSON (a notebook, a config) has it.
func jsonEscape(s string) (string, bool) {
	s = strings.TrimSuffix(s, "\n")
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return "", false
	}
	out := strings.TrimSuffix(b.String(), "\n")
	out = out[1 : len(out)-1]
	return out, out != s
}

// encodeEntities writes <, > and & (and " when quotes) as HTML entities.
func encodeEntities(quotes bool) func(string) (string, bool) {
	pairs := []string{"&", "&amp;", "<", "&lt;", ">", "&gt;"}
	if quotes {
		pairs = append(pairs, `"`, "&quot;")
	}
	r := strings.NewReplacer(pairs...)
	return func(s string) (string, bool) {
		out := r.Replace(s)
		return out, out != s
	}
}

// findListed finds old as consecutive lines of a numbered listing the file
// holds ("12\tfoo", "12: foo"): the lines' text after their numbers is
// old's, numbered one after the other with one separator.
func (d *doc) findListed(old string) search {
	want, _ := splitTerm(old)
	k := 0
	for k < len(want) && isBlank(want[k]) {
		k++
	}
	if k == len(want) {
		return search{}
	}
	s := search{pass: passExact}
	text := d.text
	for from := 0; from < len(text) && !s.full(); {
		i := strings.Index(text[from:], want[k])
		if i < 0 {
			break
		}
		at := from + i
		ls := strings.LastIndexByte(text[:at], '\n') + 1
		from = at + 1
		if le := strings.IndexByte(text[at:], '\n'); le >= 0 {
			from = at + le + 1 // the line is settled: on to the next
		}
		if ls == at || !strings.ContainsAny(text[ls:ls+1], " L0123456789") {
			continue
		}
		first := d.lineOf(ls) - k
		if first < 0 || first+len(want) > d.numLines() {
			continue
		}
		if d.listed(first, want) {
			s.add(match{start: d.lineStarts()[first], end: d.lineEnd(first + len(want) - 1), firstLine: first})
		}
	}
	return s
}

// listed reports whether the lines from first on are want, numbered
// consecutively with one separator.
func (d *doc) listed(first int, want []string) bool {
	n0, sep := -1, ""
	for j, w := range want {
		n, sp, text, ok := unnumber(d.line(first + j))
		if !ok || text != w && !(isBlank(w) && text == "") {
			return false
		}
		if n0 < 0 {
			n0 = n - j
		}
		if n != n0+j || sp != "" && sep != "" && sp != sep {
			return false
		}
		if sp != "" {
			sep = sp
		}
	}
	return sep != ""
}
