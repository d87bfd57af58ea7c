package fileedit

import (
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// explainMiss writes the repair text for an edit whose old was found in no
// pass: the edit it depends on when old appears only once another edit of
// the call is applied, else the nearest lines of the file.
func (r *resolver) explainMiss(i int) {
	old := normalizeArg(r.edits[i].Old)
	if j, ok := r.appearsAfter(i, old); ok {
		r.problem(i, ErrAfterEdit, fmt.Sprintf(
			"old text is not in %s: it appears only once edit %d is applied, but all edits of a call are matched against the original file. Merge edit %d and edit %d into one edit, or send this edit in a new call after this one.",
			r.path, j+1, j+1, i+1))
		return
	}
	text := "old text not found in " + r.path + "."
	// the slips old showed are named, and the nearest lines are those of
	// what old meant
	seen, near := r.seenText(i)
	if seen == "" && numbered(old) {
		// numbered, but not a listing that could be read back
		seen = " " + slips[0].hint
	}
	text += seen
	if near != "" {
		old = near
	}
	if strings.TrimSpace(old) == "" {
		r.problem(i, ErrNotFound, text+" old holds only blank lines or spaces, which is not enough to find a place: put in old the lines around the place you want to change.")
		return
	}
	lo, hi, ok := r.nearest(old)
	if !ok {
		r.problem(i, ErrNotFound, text+" No similar lines either: read the file again with read_file and copy the exact lines you want to change into old.")
		return
	}
	var b strings.Builder
	b.WriteString(text)
	if lo == hi {
		b.WriteString(" The nearest line is " + strconv.Itoa(lo+1) + " — copy it exactly into old:\n")
	} else {
		b.WriteString(" The nearest lines are " + strconv.Itoa(lo+1) + "–" + strconv.Itoa(hi+1) + " — copy them exactly into old:\n")
	}
	cut := false
	for l := lo; l <= hi; l++ {
		line := r.doc.line(l)
		if len(line) > maxShownLine {
			line, cut = excerpt(line, old), true
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("(end of lines)")
	if cut {
		b.WriteString(" Long lines were cut at …: put in old only the part of the line you change, with a few words around it.")
	}
	r.problem(i, ErrNotFound, b.String())
}

// appearsAfter reports the first other edit, in call order, once which
// (with the edits before it) old can be found.
func (r *resolver) appearsAfter(i int, old string) (int, bool) {
	others := make([]resolved, 0, len(r.done))
	for _, e := range r.done {
		if e.edit != i {
			others = append(others, e)
		}
	}
	sort.Slice(others, func(a, b int) bool { return others[a].edit < others[b].edit })
	for k := range others {
		text, ok := applyRegions(r.doc.text, others[:k+1])
		if !ok {
			break
		}
		d := doc{text: text}
		if d.find(old).count > 0 {
			return others[k].edit, true
		}
	}
	return 0, false
}

// applyRegions applies resolved edits to text; false if two overlap.
func applyRegions(text string, edits []resolved) (string, bool) {
	order := append([]resolved(nil), edits...)
	sort.Slice(order, func(a, b int) bool { return order[a].start < order[b].start })
	var b strings.Builder
	last := 0
	for _, e := range order {
		if e.start < last {
			return "", false
		}
		b.WriteString(text[last:e.start])
		b.WriteString(e.repl)
		last = e.end
	}
	b.WriteString(text[last:])
	return b.String(), true
}

// numbered reports whether every non-blank line of old starts with a line
// number, a frequent copy mistake from numbered read_file output, even when
// the lines are not a listing that can be read back.
func numbered(old string) bool {
	n := 0
	for _, l := range strings.Split(old, "\n") {
		if isBlank(l) {
			continue
		}
		if _, sep, _, ok := unnumber(l); !ok || sep == "" {
			return false
		}
		n++
	}
	return n > 0
}

// Tuning of the nearest-lines search.
const (
	// similar is the similarity from which two lines coincide: one typo in
	// a line of twenty characters still coincides, "return nil" and
	// "return err" do not.
	similar = 0.75
	// maxNearestOld bounds the old lines considered.
	maxNearestOld = 64
	// maxShown bounds the lines shown back.
	maxShown = 40
	// maxShownLine bounds the bytes of one line shown back: a minified file
	// must not flood the model's context.
	maxShownLine = 400
	// maxFuzzyPairs bounds the line comparisons that go beyond equality.
	maxFuzzyPairs = 1 << 19
	// maxVotes bounds the coinciding pairs counted (a file of a thousand
	// "}" lines and an old of many "}" lines would otherwise vote for ever).
	maxVotes = 1 << 16
)

// nearest finds the lines of the file closest to old: the window where the
// most lines of old coincide with a file line at the same place (give or
// take one line, for a line the model dropped or added). At least half of
// the non-blank lines of old must coincide. lo and hi are 0-based lines.
func (r *resolver) nearest(old string) (lo, hi int, ok bool) {
	core := trimEdges(old).core
	if core == "" {
		return 0, 0, false
	}
	// the lines of old, whitespace removed, with their place in old
	var want []string
	var place []int
	for j, l := range strings.Split(core, "\n") {
		if len(want) == maxNearestOld {
			break
		}
		if s := squeeze(l); s != "" {
			want = append(want, s)
			place = append(place, j)
		}
	}
	n := r.doc.numLines()
	fuzzy := n*len(want) <= maxFuzzyPairs
	type vote struct {
		set    uint64
		weight float64
	}
	votes := map[int]*vote{}
	cast := 0
	for i := 0; i < n && cast < maxVotes; i++ {
		line := squeeze(r.doc.line(i))
		if line == "" {
			continue
		}
		for j, w := range want {
			var sim float64
			switch {
			case line == w:
				sim = 1
			case fuzzy:
				sim = r.cmp.lineSimilarity(line, w)
			}
			if sim < similar {
				continue
			}
			cast++
			for d := -1; d <= 1; d++ {
				s := i - place[j] + d
				v := votes[s]
				if v == nil {
					v = &vote{}
					votes[s] = v
				}
				v.set |= 1 << uint(j)
				if d == 0 {
					v.weight += sim
				} else {
					v.weight += sim / 2
				}
			}
		}
	}
	best, bestStart := (*vote)(nil), 0
	for s, v := range votes {
		if best == nil || better(v.set, v.weight, s, best.set, best.weight, bestStart) {
			best, bestStart = v, s
		}
	}
	if best == nil || 2*bits.OnesCount64(best.set) < len(want) {
		return 0, 0, false
	}
	// show the window old would cover, widened to the coinciding lines a
	// line off (a line the model dropped or added)
	span := strings.Count(core, "\n")
	lo, hi = bestStart, bestStart+span
	for j, w := range want {
		at := bestStart + place[j]
		if r.closeness(at, w) >= similar {
			continue
		}
		before, after := r.closeness(at-1, w), r.closeness(at+1, w)
		switch {
		case after >= similar && after >= before:
			hi = max(hi, at+1)
		case before >= similar:
			lo = min(lo, at-1)
		}
	}
	lo, hi = max(lo, 0), min(hi, n-1)
	if hi-lo+1 > maxShown {
		hi = lo + maxShown - 1
	}
	return lo, hi, true
}

// closeness is the similarity of file line i (0-based) to the squeezed
// old line w; 0 outside the file.
func (r *resolver) closeness(i int, w string) float64 {
	if i < 0 || i >= r.doc.numLines() {
		return 0
	}
	if l := squeeze(r.doc.line(i)); l != w {
		return r.cmp.lineSimilarity(l, w)
	}
	return 1
}

// better orders candidate windows: more coinciding lines, then closer
// similarity, then earlier in the file (a stable answer).
func better(set uint64, w float64, s int, bset uint64, bw float64, bs int) bool {
	if c, bc := bits.OnesCount64(set), bits.OnesCount64(bset); c != bc {
		return c > bc
	}
	if w != bw {
		return w > bw
	}
	return s < bs
}

// squeeze removes all whitespace: lines are compared for content only.
func squeeze(s string) string {
	if strings.IndexFunc(s, unicode.IsSpace) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// similarity is 1 − edit distance / length of the longer string, computed
// only as far as it can still reach the threshold.
func (c *comparer) similarity(a, b string) float64 {
	if !isASCII(a) || !isASCII(b) {
		// compare characters, not bytes: a curly quote is one typo
		a, b = runesAsBytes(a, b)
	}
	la, lb := len(a), len(b)
	longer := max(la, lb)
	if longer == 0 {
		return 1
	}
	if longer > maxDistanceLen || c.work <= 0 {
		return affixSimilarity(a, b)
	}
	limit := int(float64(longer) * (1 - similar))
	if la-lb > limit || lb-la > limit {
		return 0
	}
	c.work -= min(la, lb) * (2*limit + 1)
	d, ok := boundedDistance(a, b, limit)
	if !ok {
		return 0
	}
	return 1 - float64(d)/float64(longer)
}

// lineSimilarity compares a file line with a line of old, both squeezed.
// A file line much longer than the old line is compared by the part of it
// that starts or ends like the old line: old may be a fragment of a long
// line (minified code, a long call), mistyped.
func (c *comparer) lineSimilarity(line, w string) float64 {
	sim := c.similarity(line, w)
	if sim >= similar || len(line)*4 <= len(w)*5 {
		return sim
	}
	if p, ok := fragmentAt(line, w); ok {
		sim = max(sim, c.similarity(line[p:min(len(line), p+len(w))], w))
	}
	return sim
}

// fragmentAt finds where in line a piece shaped like w starts: at the first
// occurrence of w's head, or len(w) before the end of w's tail.
func fragmentAt(line, w string) (int, bool) {
	k := min(16, len(w)/3)
	if k < 4 {
		return 0, false
	}
	if i := strings.Index(line, w[:k]); i >= 0 {
		return i, true
	}
	if i := strings.Index(line, w[len(w)-k:]); i >= 0 {
		return max(0, i+k-len(w)), true
	}
	return 0, false
}

// comparer measures line similarity within a work budget: edit distances
// are exact but costly, so once the budget is spent (a large file of long
// lines and a long old) lines are compared by prefix and suffix only, and a
// miss is still explained in bounded time.
type comparer struct {
	work int // distance cells left to compute
}

// maxDistanceWork is the distance cells computed for one miss, about a
// tenth of a second.
const maxDistanceWork = 1 << 26

// maxDistanceLen is the longest line compared by edit distance; longer ones
// (minified code, data) are compared by their common prefix and suffix,
// which still recognises a line with one typo.
const maxDistanceLen = 1000

// affixSimilarity is the share of the longer string covered by the common
// prefix and suffix of a and b.
func affixSimilarity(a, b string) float64 {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return float64(p+s) / float64(max(len(a), len(b)))
}

// boundedDistance is the Levenshtein distance of a and b, or false when it
// exceeds limit. Only a band of width 2·limit+1 around the diagonal is
// computed.
func boundedDistance(a, b string, limit int) (int, bool) {
	if len(a) > len(b) {
		a, b = b, a
	}
	const inf = 1 << 30
	var bufA, bufB [128]int // most lines fit: no allocation per comparison
	prev, cur := bufA[:], bufB[:]
	if len(b)+1 > len(bufA) {
		prev, cur = make([]int, len(b)+1), make([]int, len(b)+1)
	}
	prev, cur = prev[:len(b)+1], cur[:len(b)+1]
	for k := range prev {
		if k <= limit {
			prev[k] = k
		} else {
			prev[k] = inf
		}
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-limit), min(len(b), i+limit)
		cur[0] = inf
		if i <= limit {
			cur[0] = i
		}
		if lo > 1 {
			cur[lo-1] = inf // read by this row, outside the band
		}
		rowMin := cur[0]
		for k := lo; k <= hi; k++ {
			cost := 1
			if a[i-1] == b[k-1] {
				cost = 0
			}
			v := min(prev[k-1]+cost, prev[k]+1, cur[k-1]+1)
			cur[k] = v
			rowMin = min(rowMin, v)
		}
		if hi+1 <= len(b) {
			cur[hi+1] = inf // read by the next row, outside this band
		}
		if rowMin > limit {
			return 0, false
		}
		prev, cur = cur, prev
	}
	if prev[len(b)] > limit {
		return 0, false
	}
	return prev[len(b)], true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// runesAsBytes maps the characters of a and b to single bytes (same
// character, same byte) so that the byte distance counts characters. Past
// 256 distinct characters the rest share one byte; the distance is then a
// slight underestimate, harmless for a hint.
func runesAsBytes(a, b string) (string, string) {
	codes := map[rune]byte{}
	conv := func(s string) string {
		out := make([]byte, 0, len(s))
		for _, r := range s {
			c, ok := codes[r]
			if !ok {
				c = byte(min(len(codes), 255))
				codes[r] = c
			}
			out = append(out, c)
		}
		return string(out)
	}
	return conv(a), conv(b)
}

// excerpt shortens a long line to about maxShownLine bytes around the part
// that looks like a line of old (the start of the line if none does), on
// character boundaries, with "…" where it was cut.
func excerpt(line, old string) string {
	start := 0
	for _, o := range strings.Split(old, "\n") {
		o = strings.TrimSpace(o)
		if len(o) < 12 {
			continue
		}
		if p, ok := fragmentAt(line, o); ok {
			start = max(0, p-maxShownLine/4)
			break
		}
	}
	end := min(len(line), start+maxShownLine)
	// back off to a character start, at most the length of one character:
	// invalid UTF-8 may have no character start at all
	for k := 0; k < utf8.UTFMax && start > 0 && !utf8.RuneStart(line[start]); k++ {
		start--
	}
	for k := 0; k < utf8.UTFMax && end < len(line) && end > start && !utf8.RuneStart(line[end]); k++ {
		end--
	}
	s := line[start:end]
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}
