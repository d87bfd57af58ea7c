package fileedit

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzApply checks the promises of Apply on any input:
//   - it never panics and never modifies its input;
//   - a refusal is a *Error with a framed repair text and no content;
//   - an accepted call changes the file, keeps its BOM, and
//   - with exact matches only, gives exactly the original with each old
//     replaced by its new at its single occurrence;
//   - with loose matches, differs from that only in whitespace: the
//     non-whitespace text of the result is the original's with old's
//     replaced by new's (re-indentation and blank edge lines change only
//     whitespace), and it contains new's non-whitespace text;
//   - every byte outside the replaced regions is kept, and an edit repaired
//     for a slip was found by no pass as sent, replaced the repaired
//     old and wrote the repaired new, whitespace aside.
//
// The seed corpus is the golden and corpus cases plus a few hand-made ones, so
// `go test` runs them every time.
func FuzzApply(f *testing.F) {
	for _, dir := range []string{"golden", "corpus"} {
		for _, path := range caseFiles(f, dir) {
			c := readCase(f, path)
			_, content, edits := c.input(f)
			e1, e2, two := Edit{}, Edit{}, len(edits) > 1
			if len(edits) > 0 {
				e1 = edits[0]
			}
			if two {
				e2 = edits[1]
			}
			f.Add(content, e1.Old, e1.New, e2.Old, e2.New, two)
		}
	}
	f.Add([]byte("a\r\nb\r\n"), "a\nb", "c", "", "", false)
	f.Add([]byte("\tx\n\t\ty\n"), "  x\n    y\n", "  x\n", "", "", false)
	f.Add([]byte("x"), "x", "", "", "", false)
	f.Add([]byte("\n\n"), "\n", "", "\n", "x", true)
	f.Fuzz(func(t *testing.T, content []byte, old1, new1, old2, new2 string, two bool) {
		edits := []Edit{{Old: old1, New: new1}}
		if two {
			edits = append(edits, Edit{Old: old2, New: new2})
		}
		before := bytes.Clone(content)
		o, err := ApplyFile("", content, edits)
		if !bytes.Equal(content, before) {
			t.Fatal("Apply modified its input")
		}
		if err != nil {
			checkRefusal(t, err, o)
			return
		}
		checkApplied(t, content, edits, o)
	})
}

func checkRefusal(t *testing.T, err error, o Outcome) {
	t.Helper()
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("refusal is %T, want *Error: %v", err, err)
	}
	if len(fe.Problems) == 0 {
		t.Fatal("refusal without problems")
	}
	for _, p := range fe.Problems {
		if p.Kind == nil || p.Text == "" {
			t.Fatalf("problem without kind or text: %+v", p)
		}
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "[error: ") || !strings.HasSuffix(msg, "]") {
		t.Fatalf("repair text not framed: %q", msg)
	}
	if o.Content != nil || o.Summary != "" || o.Loose != 0 {
		t.Fatalf("refusal returned an outcome: %+v", o)
	}
}

func checkApplied(t *testing.T, content []byte, edits []Edit, o Outcome) {
	t.Helper()
	if bytes.Equal(o.Content, content) {
		t.Fatal("accepted call left the content unchanged")
	}
	if bytes.HasPrefix(content, []byte(bom)) && !bytes.HasPrefix(o.Content, []byte(bom)) {
		t.Fatal("BOM lost")
	}
	if o.Summary == "" || len(o.Edits) != len(edits) {
		t.Fatalf("outcome incomplete: %+v", o)
	}
	if Diff("f", content, o.Content) == "" {
		t.Fatal("no diff for a change")
	}
	checkRegions(t, content, o)
	for i, a := range o.Edits {
		if a.Repair != "" {
			checkRepaired(t, content, edits[i], o.regions[i])
			checkWritten(t, content, a.Repair, edits[i], o.regions[i])
		}
	}
	if repaired(o) {
		return // the references below are for edits found as sent
	}
	src := fuzzNorm(string(content))
	got := fuzzNorm(string(o.Content))
	if o.Loose == 0 {
		if strings.ContainsRune(src, '\r') || anyCR(edits) {
			return // lone CRs merge with neighbouring LFs; covered above
		}
		want, ok := replaceUnique(src, edits)
		if !ok {
			t.Fatalf("exact edits applied though an old is not unique or edits overlap:\n%q\n%+v", src, edits)
		}
		if got != want {
			t.Fatalf("exact result differs:\nwant %q\ngot  %q", want, got)
		}
		return
	}
	if !utf8.ValidString(src) || !validEdits(edits) {
		return
	}
	sq := squeezeAll(got)
	size := len(squeezeAll(src))
	for _, e := range edits {
		n := squeezeAll(fuzzNorm(e.New))
		if !strings.Contains(sq, n) {
			t.Fatalf("result lacks new's text %q:\n%q", n, got)
		}
		size += len(n) - len(squeezeAll(fuzzNorm(e.Old)))
	}
	if len(sq) != size {
		t.Fatalf("loose edit changed more than whitespace: %d non-space bytes, want %d\nsrc %q\ngot %q\nedits %+v", len(sq), size, src, got, edits)
	}
}

func repaired(o Outcome) bool {
	for _, a := range o.Edits {
		if a.Repair != "" {
			return true
		}
	}
	return false
}

// checkRegions checks that the result is the original with each region
// replaced and every byte outside the regions kept.
func checkRegions(t *testing.T, content []byte, o Outcome) {
	t.Helper()
	rs := append([]region(nil), o.regions...)
	sort.Slice(rs, func(a, b int) bool { return rs[a].start < rs[b].start })
	var want []byte
	last := 0
	for _, r := range rs {
		if r.start < last || r.end < r.start || r.end > len(content) {
			t.Fatalf("regions out of order or out of the file: %+v", rs)
		}
		want = append(want, content[last:r.start]...)
		want = append(want, r.repl...)
		last = r.end
	}
	want = append(want, content[last:]...)
	if !bytes.Equal(want, o.Content) {
		t.Fatalf("bytes outside the replaced regions changed:\nwant %q\ngot  %q", want, o.Content)
	}
}

// checkRepaired checks one repaired edit: the passes did not find its old
// as sent; the region it replaced is the repaired old, and its replacement
// the repaired new, whitespace aside (the passes forgive only whitespace).
func checkRepaired(t *testing.T, content []byte, e Edit, r region) {
	t.Helper()
	d := doc{text: decode(content).text}
	if d.find(normalizeArg(e.Old)).count != 0 {
		t.Fatalf("repaired an old the passes find: %q", e.Old)
	}
	if r.old == normalizeArg(e.Old) {
		t.Fatalf("a repair that changed nothing in old: %q", e.Old)
	}
	if !utf8.Valid(content) {
		return
	}
	if got, want := squeezeAll(fuzzNorm(string(content[r.start:r.end]))), squeezeAll(r.old); got != want {
		t.Fatalf("repaired edit replaced %q, which is not the repaired old %q", got, want)
	}
	if got, want := squeezeAll(fuzzNorm(r.repl)), squeezeAll(r.new); got != want {
		t.Fatalf("repaired edit wrote %q, not the repaired new %q", got, want)
	}
}

// checkWritten checks that a repaired edit wrote the file's own
// characters: no kind of mark the repair took out of old where the lines
// it replaced have none, and no indentation character those lines do not
// use (spaces and tabs aside).
func checkWritten(t *testing.T, content []byte, repair string, e Edit, r region) {
	t.Helper()
	ls := bytes.LastIndexByte(content[:r.start], '\n') + 1
	le := len(content)
	if k := bytes.IndexByte(content[max(r.end-1, r.start):], '\n'); k >= 0 {
		le = max(r.end-1, r.start) + k
	}
	place := fuzzNorm(string(content[ls:le]))
	repl := fuzzNorm(r.repl)
	sl := typographic
	for _, s := range slips {
		if s.name == repair {
			sl = s
		}
	}
	if bad := foreignMarks(sl.marks, normalizeArg(e.Old), r.old, repl, place); len(bad) > 0 {
		t.Fatalf("repair %q wrote %v, which the file does not have there:\nwrote %q\nover  %q", repair, bad, repl, place)
	}
	own := map[rune]bool{' ': true, '\t': true}
	indents := func(s string, f func(rune)) {
		for _, l := range strings.Split(s, "\n") {
			for _, c := range strings.TrimSuffix(l, strings.TrimLeftFunc(l, unicode.IsSpace)) {
				f(c)
			}
		}
	}
	indents(place, func(c rune) { own[c] = true })
	indents(repl, func(c rune) {
		if !own[c] {
			t.Fatalf("repair %q indented with %U, which the file does not use there:\nwrote %q\nover  %q", repair, c, repl, place)
		}
	})
}

// fuzzNorm is the view of the file the matcher has: no BOM, LF endings.
func fuzzNorm(s string) string {
	return strings.ReplaceAll(strings.TrimPrefix(s, bom), "\r\n", "\n")
}

func squeezeAll(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

func anyCR(edits []Edit) bool {
	for _, e := range edits {
		if strings.ContainsRune(e.Old, '\r') || strings.ContainsRune(e.New, '\r') {
			return true
		}
	}
	return false
}

func validEdits(edits []Edit) bool {
	for _, e := range edits {
		if !utf8.ValidString(e.Old) || !utf8.ValidString(e.New) {
			return false
		}
	}
	return true
}

// replaceUnique is the reference for exact edits: each old occurs exactly
// once (overlapping occurrences count), the regions do not overlap, and
// each is replaced by its new.
func replaceUnique(src string, edits []Edit) (string, bool) {
	type region struct {
		start, end int
		new        string
	}
	var rs []region
	for _, e := range edits {
		old, new := fuzzNorm(e.Old), fuzzNorm(e.New)
		i := strings.Index(src, old)
		if i < 0 || strings.Contains(src[i+1:], old) {
			return "", false
		}
		rs = append(rs, region{i, i + len(old), new})
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a].start < rs[b].start })
	var b strings.Builder
	last := 0
	for _, r := range rs {
		if r.start < last {
			return "", false
		}
		b.WriteString(src[last:r.start])
		b.WriteString(r.new)
		last = r.end
	}
	b.WriteString(src[last:])
	return b.String(), true
}

// FuzzDiff checks that Diff never panics, is empty exactly for equal
// inputs, and names every added line of the new text.
func FuzzDiff(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte("a\nc\n"))
	f.Add([]byte(""), []byte("x"))
	f.Add([]byte("\ufeffa\r\n"), []byte("a\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		d := Diff("f", a, b)
		if bytes.Equal(a, b) != (d == "") {
			t.Fatalf("Diff of %q and %q = %q", a, b, d)
		}
	})
}
