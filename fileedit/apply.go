package fileedit

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Edit replaces Old with New.
type Edit struct {
	Old, New string
}

// Outcome is the result of an accepted call.
type Outcome struct {
	// Content is the new file bytes, with the file's BOM and line endings
	// restored.
	Content []byte
	// Loose counts the edits that matched only ignoring whitespace.
	Loose int
	// Summary is one line for the model, e.g. "2 edits applied (1 matched
	// ignoring whitespace — copy the file's exact text next time)".
	Summary string
	// Edits tells where each edit landed, in call order.
	Edits []Applied
	// regions are the replaced regions, in call order.
	regions []region
}

// Applied locates one applied edit in the new content, for editor
// locations and for messages.
type Applied struct {
	// Line and EndLine are the 1-based first and last lines of the new text
	// in the new content; EndLine < Line when the edit only deleted text.
	Line, EndLine int
	// Loose is set when old matched only ignoring whitespace and new was
	// re-indented into the file's indentation.
	Loose bool
	// Repair names the slip repaired in old and new ("line-number
	// prefixes"), "" when old was found as sent.
	Repair string
}

// region is where one edit landed in the original content (raw bytes) and
// the edit as it was applied, repaired: what the tests check a repair
// changed, and nothing else.
type region struct {
	start, end int
	repl       string // the bytes that replaced them
	old, new   string
	repaired   bool
}

// defaultName is used in messages when the caller gives no file name.
const defaultName = "the file"

// ApplyFile resolves all edits against the original content and
// returns the new content. It does no I/O. On refusal it returns a *Error
// whose text is the repair instruction for the model, and content is
// untouched. path is the file's name as the model wrote it ("main.go"),
// used in the messages ("" reads "the file").
func ApplyFile(path string, content []byte, edits []Edit) (Outcome, error) {
	return applyFile(path, content, edits, true)
}

// applyFile is ApplyFile with the first-try repairs on or off; off is
// only for measuring what they bring.
func applyFile(path string, content []byte, edits []Edit, repairs bool) (Outcome, error) {
	if path == "" {
		path = defaultName
	}
	refuse := func(ps ...Problem) (Outcome, error) {
		return Outcome{}, &Error{Path: path, Problems: ps, edits: len(edits)}
	}
	if len(edits) == 0 {
		return refuse(Problem{Kind: ErrNoEdits, Text: `no edits given. Send edits as [{"old": "exact text from the file", "new": "its replacement"}].`})
	}
	if bytes.IndexByte(content, 0) >= 0 {
		return refuse(Problem{Kind: ErrBinary, Text: path + " is a binary file (it holds NUL bytes); edit_file only changes text files."})
	}
	f := decode(content)
	r := &resolver{path: path, doc: doc{text: f.text}, edits: edits, cmp: comparer{work: maxDistanceWork},
		repairs: repairs}
	r.resolveAll()
	if len(r.problems) > 0 {
		return refuse(r.problems...)
	}
	out, applied, regions, changed := r.build(f)
	if !changed {
		return refuse(Problem{Kind: ErrUnchanged, Text: r.unchangedText()})
	}
	loose := 0
	for _, a := range applied {
		if a.Loose {
			loose++
		}
	}
	return Outcome{Content: out, Loose: loose, Summary: summary(applied, r.done), Edits: applied, regions: regions}, nil
}

// summary is the one line the model reads after a success: how many edits
// matched only ignoring whitespace and which slips were repaired,
// each with what to send next time.
func summary(applied []Applied, done []resolved) string {
	n := len(applied)
	s := "1 edit applied"
	if n != 1 {
		s = strconv.Itoa(n) + " edits applied"
	}
	var repairs []string
	for _, e := range done {
		if e.repair == nil {
			continue
		}
		what := e.repair.did + " — " + e.repair.advice
		if n > 1 {
			what = "edit " + strconv.Itoa(e.edit+1) + " after " + what
		}
		repairs = append(repairs, what)
	}
	sort.Strings(repairs)
	switch {
	case n == 1 && len(repairs) == 1:
		s += " after " + repairs[0]
	case len(repairs) > 0:
		s += "; " + strings.Join(repairs, "; ")
	}
	loose := 0
	for _, a := range applied {
		if a.Loose {
			loose++
		}
	}
	if loose > 0 {
		s += " (" + strconv.Itoa(loose) + " matched ignoring whitespace — copy the file's exact text next time)"
	}
	return s
}

// resolved is one edit located in the original text.
type resolved struct {
	edit       int // 0-based index in the call
	start, end int // region of the normalized original text
	repl       string
	loose      bool
	repair     *slip  // the slip read in old and new, nil for none
	old, new   string // the repaired edit, when repair is set
}

// resolver holds one call while its edits are located, checked against
// each other and explained.
type resolver struct {
	path     string
	doc      doc
	edits    []Edit
	style    *style   // the file's indentation, detected on first need
	cmp      comparer // line similarity for the nearest lines
	done     []resolved
	missed   []int // edits whose old was not found
	problems []Problem
	repairs  bool               // try the first-try repairs
	seen     map[int][]*reading // slips an edit's old showed, for its refusal
	folded   *foldedText        // the text with typographic characters read as ASCII
	has      map[string]bool    // what fileHas found
}

func (r *resolver) problem(edit int, kind error, text string) {
	r.problems = append(r.problems, Problem{Edit: edit + 1, Kind: kind, Text: text})
}

func (r *resolver) fileStyle() style {
	if r.style == nil {
		st := detectStyle(r.doc.allLines())
		r.style = &st
	}
	return *r.style
}

// resolveAll locates every edit in the original text, then refuses
// overlaps and explains misses; problems end up in edit order.
func (r *resolver) resolveAll() {
	for i, e := range r.edits {
		old, new := normalizeArg(e.Old), normalizeArg(e.New)
		switch {
		case old == "":
			r.problem(i, ErrEmptyOld, "old is empty. Put in old the exact lines to replace, copied from the file; to add text, put the line next to the insertion point in old and repeat it in new with your addition. To create a new file, use write_file.")
			continue
		case old == new:
			r.problem(i, ErrUnchanged, "old and new are identical, so there is nothing to change. Put the changed text in new.")
			continue
		}
		s := r.doc.find(old)
		switch {
		case s.count == 0:
			if r.repairs {
				res, ok, refused := r.repair(i, old, new)
				if ok {
					r.done = append(r.done, res)
				}
				if ok || refused {
					continue
				}
			}
			r.missed = append(r.missed, i)
			continue
		case s.count > 1:
			r.problem(i, ErrAmbiguous, r.ambiguousText(s))
			continue
		}
		r.done = append(r.done, r.replacement(i, s, new))
	}
	r.checkOverlaps()
	for _, i := range r.missed {
		r.explainMiss(i)
	}
	sort.SliceStable(r.problems, func(a, b int) bool { return r.problems[a].Edit < r.problems[b].Edit })
}

// replacement turns a unique match into a region and its new text.
func (r *resolver) replacement(i int, s search, new string) resolved {
	m := s.matches[0]
	res := resolved{edit: i, start: m.start, end: m.end, repl: new, loose: s.pass != passExact}
	if s.pass == passExact {
		return res
	}
	lines, term := s.trimLike(new)
	if s.reindent {
		old := strings.Split(s.core, "\n")
		file := make([]string, len(old))
		for j := range file {
			file[j] = r.doc.line(m.firstLine + j)
		}
		lines = reindent(old, file, lines, r.fileStyle())
	}
	res.repl = strings.Join(lines, "\n")
	if term && m.nl {
		res.repl += "\n"
	}
	return res
}

// checkOverlaps refuses edits whose regions intersect: applied one after
// the other they would not mean what the model wrote.
func (r *resolver) checkOverlaps() {
	sorted := append([]resolved(nil), r.done...)
	sort.SliceStable(sorted, func(a, b int) bool {
		if sorted[a].start != sorted[b].start {
			return sorted[a].start < sorted[b].start
		}
		return sorted[a].end < sorted[b].end
	})
	for k := 1; k < len(sorted); k++ {
		a, b := sorted[k-1], sorted[k]
		if b.start >= a.end {
			continue
		}
		if a.end > b.end {
			sorted[k] = a // keep the widest region for the next comparison
		}
		first, second := a, b
		if first.edit > second.edit {
			first, second = second, first
		}
		if r.edits[first.edit] == r.edits[second.edit] {
			r.problem(second.edit, ErrOverlap, fmt.Sprintf("it repeats edit %d. Send each change once.", first.edit+1))
			continue
		}
		where := r.lineRange(first.start, first.end)
		if w2 := r.lineRange(second.start, second.end); w2 != where {
			where += " and " + w2
		} else {
			where = "both at " + where
		}
		r.problem(second.edit, ErrOverlap, fmt.Sprintf("it overlaps edit %d (%s of %s). Merge the two into one edit whose old covers both.",
			first.edit+1, where, r.path))
	}
}

// lineRange renders "line 4" or "lines 4–6" for a region.
func (r *resolver) lineRange(start, end int) string {
	span := r.lineSpan(start, end)
	a, b := span[0]+1, span[1]+1
	if a == b {
		return "line " + strconv.Itoa(a)
	}
	return "lines " + strconv.Itoa(a) + "–" + strconv.Itoa(b)
}

// ambiguousText lists where old matched (line numbers, with a count when a
// line holds several matches) and how to make it unique.
func (r *resolver) ambiguousText(s search) string {
	var where []string
	seen := map[int]int{} // line → index in where
	times := map[int]int{}
	for _, m := range s.matches {
		at := m.start
		if at+1 < m.end && r.doc.text[at] == '\n' {
			at++ // old starts with the end of the previous line
		}
		l := r.doc.lineNo(at)
		if _, ok := seen[l]; !ok {
			seen[l] = len(where)
			where = append(where, strconv.Itoa(l))
		}
		times[l]++
	}
	for l, n := range times {
		if n > 1 {
			where[seen[l]] += " (" + strconv.Itoa(n) + " times)"
		}
	}
	list := strings.Join(where, ", ")
	count := strconv.Itoa(s.count)
	if s.count > len(s.matches) {
		list += ", …"
	}
	if s.full() {
		count = "at least " + count
	}
	how := "ignoring whitespace "
	if s.pass == passExact {
		how = ""
	}
	return fmt.Sprintf("old text matches %s places in %s %s(lines %s). Add the neighbouring lines that differ to old, copied exactly, so it matches only one place.",
		count, r.path, how, list)
}

// build applies the resolved edits to the original bytes: the regions map
// back to raw offsets, new text takes the file's line ending, and every byte
// outside the regions is copied unchanged. changed is false when every
// region already held its replacement.
func (r *resolver) build(f *textFile) (out []byte, applied []Applied, regions []region, changed bool) {
	order := append([]resolved(nil), r.done...)
	sort.Slice(order, func(a, b int) bool { return order[a].start < order[b].start })
	size := len(f.raw)
	for _, e := range order {
		size += len(e.repl) + strings.Count(e.repl, "\n") - (e.end - e.start)
	}
	out = make([]byte, 0, max(size, 0))
	applied = make([]Applied, len(r.edits))
	regions = make([]region, len(r.edits))
	text := r.doc.text
	last, line, counted := 0, 1, 0 // line is the new line number at text[counted]
	for _, e := range order {
		rs, re := f.rawOffset(e.start), f.rawOffset(e.end)
		repl := f.ending(e.repl)
		changed = changed || repl != string(f.raw[rs:re])
		out = append(out, f.raw[last:rs]...)
		out = append(out, repl...)
		last = re
		// counting newlines is cheaper than indexing the lines of a large
		// file for one or two edits
		line += strings.Count(text[counted:e.start], "\n")
		added := strings.Count(e.repl, "\n")
		end := line + added
		if strings.HasSuffix(e.repl, "\n") || e.repl == "" {
			end-- // a final line end does not start a line of the edit
		}
		applied[e.edit] = Applied{Line: line, EndLine: end, Loose: e.loose}
		regions[e.edit] = region{start: rs, end: re, repl: repl, old: e.old, new: e.new, repaired: e.repair != nil}
		if e.repair != nil {
			applied[e.edit].Repair = e.repair.name
		}
		line += added // the new line of text[e.end]
		counted = e.end
	}
	out = append(out, f.raw[last:]...)
	return out, applied, regions, changed
}

// unchangedText explains a call whose edits, once matched and re-indented,
// leave the file as it was.
func (r *resolver) unchangedText() string {
	for _, e := range r.done {
		if e.loose {
			return "the edit leaves " + r.path + " unchanged: old matched ignoring whitespace and new was re-indented like the file, which gives the same text. To change only whitespace, copy old exactly from the file."
		}
	}
	return "the edit leaves " + r.path + " unchanged. Put the changed text in new."
}
