package lspbridge

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
)

// lineMap maps the lines of a file before an edit to its lines after:
// the lines before the first changed line keep their number, the lines
// after the last changed line shift by the change in length, and the lines
// between form the changed region, where no line is mapped.
type lineMap struct {
	prefix   int // lines equal at the start
	oldSuf   int // first old line (1-based) of the equal suffix
	newSuf   int // first new line (1-based) of the equal suffix
	identity bool
}

func identityMap() lineMap { return lineMap{identity: true} }

// wholeFileMap is the map of a file whose old text is unknown: every line
// is in the changed region, so a problem is the same when its identity is.
func wholeFileMap() lineMap { return lineMap{oldSuf: math.MaxInt, newSuf: math.MaxInt} }

func newLineMap(old, new []byte) lineMap {
	a, b := bytes.Split(old, []byte("\n")), bytes.Split(new, []byte("\n"))
	p := 0
	for p < len(a) && p < len(b) && bytes.Equal(a[p], b[p]) {
		p++
	}
	if p == len(a) && p == len(b) {
		return identityMap()
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && bytes.Equal(a[len(a)-1-s], b[len(b)-1-s]) {
		s++
	}
	return lineMap{prefix: p, oldSuf: len(a) - s + 1, newSuf: len(b) - s + 1}
}

// newLine maps an old line; ok is false inside the changed region.
func (m lineMap) newLine(old int) (int, bool) {
	switch {
	case m.identity || old <= m.prefix:
		return old, true
	case old >= m.oldSuf:
		return old - m.oldSuf + m.newSuf, true
	}
	return 0, false
}

func (m lineMap) inNewRegion(line int) bool {
	return !m.identity && line > m.prefix && line < m.newSuf
}

func (m lineMap) inOldRegion(line int) bool {
	return !m.identity && line > m.prefix && line < m.oldSuf
}

// delta is what an edit did to the diagnostics.
type delta struct {
	added    []Diagnostic // problems after the edit that were not there
	fixed    int          // problems before the edit that are gone
	existing int          // problems of the edited files still there
}

// computeDelta compares the problems before and after an edit. A problem
// is the same when its file, severity, code, source and message are and
// its line maps through the edit; a problem in an edited region matches
// one of the same identity in the region on the other side.
func computeDelta(before, after map[string][]Diagnostic, edited map[string]lineMap) delta {
	var d delta
	paths := map[string]bool{}
	for p := range before {
		paths[p] = true
	}
	for p := range after {
		paths[p] = true
	}
	for p := range paths {
		lm, isEdited := edited[p]
		if !isEdited {
			lm = identityMap()
		}
		olds, news := problems(before[p]), problems(after[p])
		oldUsed, newUsed := make([]bool, len(olds)), make([]bool, len(news))
		// Pass 1: same identity at the mapped line.
		for i, o := range olds {
			nl, ok := lm.newLine(o.Line)
			if !ok {
				continue
			}
			for j, n := range news {
				if !newUsed[j] && n.Line == nl && n.key() == o.key() {
					oldUsed[i], newUsed[j] = true, true
					break
				}
			}
		}
		// Pass 2: same identity, one side in the changed region.
		for i, o := range olds {
			if oldUsed[i] {
				continue
			}
			for j, n := range news {
				if !newUsed[j] && n.key() == o.key() && (lm.inOldRegion(o.Line) || lm.inNewRegion(n.Line)) {
					oldUsed[i], newUsed[j] = true, true
					break
				}
			}
		}
		for i := range olds {
			switch {
			case !oldUsed[i]:
				d.fixed++
			case isEdited:
				d.existing++
			}
		}
		for j, n := range news {
			if !newUsed[j] {
				d.added = append(d.added, n)
			}
		}
	}
	return d
}

func problems(ds []Diagnostic) []Diagnostic {
	var out []Diagnostic
	for _, d := range ds {
		if d.problem() {
			out = append(out, d)
		}
	}
	return out
}

// report is everything rendered after an edit for one server.
type report struct {
	server   string
	notices  []string
	complete bool   // the server answered for this version, and settled
	baseOK   bool   // the diagnostics before the edit were complete
	why      string // why incomplete
	elapsed  int64  // ms waited
	delta    delta
	edited   []string // edited files, in order
	base     string   // paths are shown relative to it
	maxTotal int
	maxFile  int
	// For a server that reports open files only (openOnly), what else was
	// checked: the importers (importers.go) — others of found, othersWhy
	// when their answer did not come, unscanned when the scan stopped
	// before the end of the root, cut when it stopped for lack of time.
	openOnly  bool
	command   bool // the change was a command's (bash), not an edit
	others    int
	found     int
	othersWhy string
	unscanned bool
	cut       bool
}

// render writes the text appended to a tool result: new errors first
// (bounded per file and in total), "fixed: N", the count of problems that
// were already there, then new warnings of the edited files. It never
// claims a clean result the server did not give.
func (r report) render() string {
	var b strings.Builder
	for _, n := range r.notices {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	isEdited := map[string]bool{}
	for _, p := range r.edited {
		isEdited[p] = true
	}
	var errs, warns []Diagnostic
	for _, d := range r.delta.added {
		switch {
		case d.Severity == SeverityError:
			errs = append(errs, d)
		case isEdited[d.Path]:
			warns = append(warns, d)
		}
	}
	r.sortDiags(errs)
	r.sortDiags(warns)
	if !r.complete {
		fmt.Fprintf(&b, "%s: diagnostics incomplete after %d ms (%s) — problems may exist that are not shown\n", r.server, r.elapsed, r.why)
		if len(errs) > 0 {
			fmt.Fprintf(&b, "errors reported so far:\n")
			r.list(&b, errs)
		}
		return strings.TrimRight(b.String(), "\n")
	}
	switch {
	case len(errs) > 0 && r.openOnly:
		fmt.Fprintf(&b, "%s: this %s introduced %s (%s; %s):\n", r.server, r.cause(), count(len(errs), "error"), r.editedNames(), r.othersChecked())
		r.list(&b, errs)
	case len(errs) > 0:
		fmt.Fprintf(&b, "%s: this %s introduced %s:\n", r.server, r.cause(), count(len(errs), "error"))
		r.list(&b, errs)
	case r.delta.existing == 0 && len(r.delta.added) == 0:
		fmt.Fprintf(&b, "%s: no problems%s\n", r.server, r.scope())
	default:
		fmt.Fprintf(&b, "%s: no new errors%s\n", r.server, r.scope())
	}
	if r.delta.fixed > 0 {
		fmt.Fprintf(&b, "fixed: %d\n", r.delta.fixed)
	}
	if r.delta.existing > 0 {
		verb := "were"
		if r.delta.existing == 1 {
			verb = "was"
		}
		fmt.Fprintf(&b, "%s %s already there (not from this %s)\n", count(r.delta.existing, "problem"), verb, r.cause())
	}
	if len(warns) > 0 {
		fmt.Fprintf(&b, "new %s:\n", pluralWord(len(warns), "warning"))
		r.list(&b, warns)
	}
	if !r.baseOK {
		fmt.Fprintf(&b, "(the diagnostics from before this %s were incomplete: some of the above may be older)\n", r.cause())
	}
	return strings.TrimRight(b.String(), "\n")
}

// cause is what made the change: "edit" or "command".
func (r report) cause() string {
	if r.command {
		return "command"
	}
	return "edit"
}

// scope is what a clean result covers, for a server that reports open
// files only: " in greet.py; 3 files that import it checked". A bare "no
// problems" would claim the other files too. "" for a server that checks
// the whole workspace.
func (r report) scope() string {
	if !r.openOnly {
		return ""
	}
	return fmt.Sprintf(" in %s; %s", r.editedNames(), r.othersChecked())
}

// othersChecked says which other files were checked with the edited ones.
func (r report) othersChecked() string {
	it := "it"
	if len(r.edited) > 1 {
		it = "them"
	}
	importers := func(n int) string {
		if n == 1 {
			return "1 file that imports " + it
		}
		return fmt.Sprintf("%d files that import %s", n, it)
	}
	why := fmt.Sprintf("(%s reports open files only)", r.server)
	switch {
	case r.found == 0 && r.cut:
		return fmt.Sprintf("the files that import %s not looked for (%s)", it, r.othersWhy)
	case r.found == 0 && r.unscanned:
		return "other files not checked " + why
	case r.found == 0:
		return "no other file imports " + it
	case r.othersWhy != "":
		return fmt.Sprintf("%s not checked (%s)", importers(r.found), r.othersWhy)
	case r.others < r.found:
		return fmt.Sprintf("the nearest %d of %s checked, the others not %s", r.others, importers(r.found), why)
	}
	return importers(r.found) + " checked"
}

// editedNames names the edited files, relative to base.
func (r report) editedNames() string {
	switch len(r.edited) {
	case 1:
		return relTo(r.base, r.edited[0])
	case 2:
		return relTo(r.base, r.edited[0]) + " and " + relTo(r.base, r.edited[1])
	}
	return fmt.Sprintf("%d edited files", len(r.edited))
}

// list writes ds (sorted, edited files first), at most maxFile per file
// and maxTotal in all.
func (r report) list(b *strings.Builder, ds []Diagnostic) {
	shown, perFile := 0, map[string]int{}
	hidden := map[string]int{}
	var hiddenOrder []string
	for _, d := range ds {
		if shown >= r.maxTotal || perFile[d.Path] >= r.maxFile {
			if hidden[d.Path] == 0 {
				hiddenOrder = append(hiddenOrder, d.Path)
			}
			hidden[d.Path]++
			continue
		}
		perFile[d.Path]++
		shown++
		fmt.Fprintf(b, "  %s:%d:%d: %s\n", relTo(r.base, d.Path), d.Line, d.Column, oneLine(d.Message))
	}
	if len(hiddenOrder) > 3 {
		// Many files broken alike: one line, not one per file.
		fmt.Fprintf(b, "  … and %d more in %d other files\n", len(ds)-shown, len(hiddenOrder))
		return
	}
	for _, p := range hiddenOrder {
		fmt.Fprintf(b, "  … and %d more in %s\n", hidden[p], relTo(r.base, p))
	}
}

func (r report) sortDiags(ds []Diagnostic) {
	rank := map[string]int{}
	for i, p := range r.edited {
		rank[p] = i + 1
	}
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		ra, rb := rank[a.Path], rank[b.Path]
		if ra == 0 {
			ra = len(r.edited) + 1
		}
		if rb == 0 {
			rb = len(r.edited) + 1
		}
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

func count(n int, word string) string {
	return fmt.Sprintf("%d %s", n, pluralWord(n, word))
}

func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// relTo shows p relative to base when it is inside it.
func relTo(base, p string) string {
	if base == "" {
		return p
	}
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
