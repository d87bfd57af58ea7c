package fileedit

import (
	"strings"
)

// tabWidth is how many columns a tab counts for when indentations written
// with tabs and with spaces are compared. Only the ratio matters: one tab
// is one level, like four spaces.
const tabWidth = 4

// style is an indentation convention: tabs, or spaces by unit columns.
type style struct {
	tabs  bool
	unit  int // columns per level: tabWidth for tabs
	known bool
}

// width counts the columns of an indentation.
func width(indent string) int {
	w := 0
	for i := 0; i < len(indent); i++ {
		if indent[i] == '\t' {
			w += tabWidth
		} else {
			w++
		}
	}
	return w
}

// render writes cols columns of indentation in style st: whole levels as
// tabs in a tab-indented file (the remainder, an alignment, as spaces).
func (st style) render(cols int) string {
	if cols <= 0 {
		return ""
	}
	if st.tabs {
		return strings.Repeat("\t", cols/tabWidth) + strings.Repeat(" ", cols%tabWidth)
	}
	return strings.Repeat(" ", cols)
}

// lineSource yields the lines whose indentation is examined.
type lineSource func(yield func(string) bool)

// spaceUnit is the indentation unit of the space-indented lines: the most
// frequent increase between consecutive lines, else the largest common
// divisor of their indentations; 0 when no line is indented with spaces.
func spaceUnit(lines lineSource) int {
	var steps [9]int
	prev, gcd := -1, 0
	lines(func(l string) bool {
		if isBlank(l) {
			return true
		}
		ind := indentOf(l)
		if strings.Contains(ind, "\t") {
			return true
		}
		w := len(ind)
		if prev >= 0 && w > prev && w-prev < len(steps) {
			steps[w-prev]++
		}
		if w > 0 {
			gcd = gcdInt(gcd, w)
		}
		prev = w
		return true
	})
	unit, best := 0, 0
	for u := 2; u < len(steps); u++ {
		if steps[u] > best {
			unit, best = u, steps[u]
		}
	}
	switch {
	case unit > 0:
		return unit
	case gcd == 0:
		return 0
	case gcd < 2 || gcd > 8:
		return 4
	}
	return gcd
}

// detectStyle finds the indentation convention of some lines: tabs when
// most indented lines start with a tab, else spaces with the most frequent
// increase of indentation between consecutive lines as the unit.
func detectStyle(lines lineSource) style {
	tabs, spaces := 0, 0
	lines(func(l string) bool {
		if isBlank(l) {
			return true
		}
		switch ind := indentOf(l); {
		case ind == "":
		case ind[0] == '\t':
			tabs++
		default:
			spaces++
		}
		return true
	})
	switch {
	case tabs == 0 && spaces == 0:
		return style{unit: 4}
	case tabs >= spaces:
		return style{tabs: true, unit: tabWidth, known: true}
	}
	unit := spaceUnit(lines)
	if unit == 0 {
		unit = 4
	}
	return style{unit: unit, known: true}
}

func gcdInt(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func sliceLines(ls ...[]string) lineSource {
	return func(yield func(string) bool) {
		for _, l := range ls {
			for _, s := range l {
				if !yield(s) {
					return
				}
			}
		}
	}
}

func (d *doc) allLines() lineSource {
	return func(yield func(string) bool) {
		n := d.numLines()
		for i := 0; i < n; i++ {
			if !yield(d.line(i)) {
				return
			}
		}
	}
}

// reindent rewrites new into the file's indentation, for a match that
// ignored indentation. old holds the model's lines, file the matched file
// lines (same count), new the replacement lines. Each new line is anchored
// to an old line — the same line when unchanged, the line it replaces, or
// the nearest one — and keeps its indentation relative to that anchor,
// converted from the model's unit to the file's: four spaces written for a
// tab-indented file become one tab, and the file's base level is kept.
func reindent(old, file, new []string, fileStyle style) []string {
	unit := spaceUnit(sliceLines(old, new))
	if unit == 0 {
		unit = fileStyle.unit // the model indented with tabs only
	}
	if !fileStyle.known {
		fileStyle = detectStyle(sliceLines(old, new))
	}
	// a tab written by the model counts as one of its levels, so that "  x"
	// in old and "\tx" in new are the same level
	mw := func(ind string) int {
		t := strings.Count(ind, "\t")
		return t*unit + len(ind) - t
	}
	anchors := anchorLines(old, new)
	out := make([]string, len(new))
	for k, line := range new {
		if isBlank(line) {
			out[k] = ""
			continue
		}
		body := strings.TrimLeft(line, " \t")
		j := anchors[k]
		if j < 0 {
			out[k] = line
			continue
		}
		fileIndent := indentOf(file[j])
		delta := mw(indentOf(line)) - mw(indentOf(old[j]))
		if delta == 0 {
			out[k] = fileIndent + body
			continue
		}
		levels, rem := delta/unit, delta%unit
		cols := width(fileIndent) + levels*fileStyle.unit + rem
		out[k] = fileStyle.render(cols) + body
	}
	return out
}

// maxAlignCells bounds the LCS table used to pair new lines with old ones;
// larger blocks pair by position.
const maxAlignCells = 1 << 18

// anchorLines pairs each line of new with the non-blank line of old whose
// indentation it is measured against; -1 when old has no non-blank line.
func anchorLines(old, new []string) []int {
	pairs := alignLines(old, new) // pairs[k] = j for unchanged lines, -1 otherwise
	anchors := make([]int, len(new))
	prevJ := -1
	for k := 0; k < len(new); {
		if pairs[k] >= 0 {
			anchors[k], prevJ = pairs[k], pairs[k]
			k++
			continue
		}
		// new lines k..e-1 replace old lines prevJ+1..nextJ-1: pair them by
		// position; surplus lines go with the last replaced line (or the
		// unchanged line before them, or after them at the very start).
		e := k
		for e < len(new) && pairs[e] < 0 {
			e++
		}
		nextJ := len(old)
		if e < len(new) {
			nextJ = pairs[e]
		}
		for t := 0; k+t < e; t++ {
			j := prevJ + 1 + t
			if j >= nextJ {
				j = nextJ - 1
			}
			if j < 0 {
				j = nextJ
			}
			anchors[k+t] = j
		}
		k = e
	}
	for k, j := range anchors {
		anchors[k] = nearestNonBlank(old, j)
	}
	return anchors
}

// nearestNonBlank returns j if old[j] has content, else the nearest line
// before it with content, else after it; -1 if there is none.
func nearestNonBlank(old []string, j int) int {
	if j >= len(old) {
		j = len(old) - 1
	}
	if j < 0 {
		j = 0
	}
	for i := j; i >= 0; i-- {
		if i < len(old) && !isBlank(old[i]) {
			return i
		}
	}
	for i := j + 1; i < len(old); i++ {
		if !isBlank(old[i]) {
			return i
		}
	}
	return -1
}

// alignLines returns, for each line of new, the index of the old line it
// keeps unchanged (same text once trimmed), by longest common subsequence;
// -1 for a changed or added line.
func alignLines(old, new []string) []int {
	pairs := make([]int, len(new))
	for k := range pairs {
		pairs[k] = -1
	}
	n, m := len(old), len(new)
	if n == 0 || m == 0 {
		return pairs
	}
	if (n+1)*(m+1) > maxAlignCells {
		for k := range pairs {
			if k < n && trimSpace(old[k]) == trimSpace(new[k]) {
				pairs[k] = k
			}
		}
		return pairs
	}
	ot := make([]string, n)
	for i := range old {
		ot[i] = trimSpace(old[i])
	}
	nt := make([]string, m)
	for i := range new {
		nt[i] = trimSpace(new[i])
	}
	// lcs[i][k] = LCS length of ot[i:] and nt[k:]
	lcs := make([]int32, (n+1)*(m+1))
	at := func(i, k int) *int32 { return &lcs[i*(m+1)+k] }
	for i := n - 1; i >= 0; i-- {
		for k := m - 1; k >= 0; k-- {
			switch {
			case ot[i] == nt[k] && ot[i] != "":
				*at(i, k) = *at(i+1, k+1) + 1
			case *at(i+1, k) >= *at(i, k+1):
				*at(i, k) = *at(i+1, k)
			default:
				*at(i, k) = *at(i, k+1)
			}
		}
	}
	for i, k := 0, 0; i < n && k < m; {
		switch {
		case ot[i] == nt[k] && ot[i] != "":
			pairs[k] = i
			i++
			k++
		case *at(i+1, k) >= *at(i, k+1):
			i++
		default:
			k++
		}
	}
	return pairs
}
