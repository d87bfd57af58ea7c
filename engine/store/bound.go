package store

import (
	"encoding/json"
	"strings"

	"github.com/mm-agent/mm/tools"
)

// What one replay entry may hold: a session keeps every tool call, so
// what each keeps is bounded, not the number of calls.
const (
	// DiffContext is how many unchanged lines a kept diff shows around
	// the change.
	DiffContext = 3
	// MaxDiffBytes bounds the old and new text of one entry's diffs
	// together, after they are cut down to the change.
	MaxDiffBytes = 32 << 10
	// MaxOutputBytes bounds the output preview kept.
	MaxOutputBytes = 4 << 10
	// MaxInputBytes bounds the call's arguments kept (a write_file of a
	// whole file would otherwise be kept whole).
	MaxInputBytes = 4 << 10
)

// cutNote ends a text the session did not keep whole.
const cutNote = "\n… (cut: the session keeps only the start of this)\n"

// Bound returns the tool call as the session keeps it: each diff cut
// down to the changed lines and DiffContext lines around them (what
// replay shows; the file itself has the rest), then every part within
// its bound. The call is not changed.
func (t *Tool) Bound() *Tool {
	b := *t
	b.Diffs = make([]tools.Diff, len(t.Diffs))
	size := 0
	for i, d := range t.Diffs {
		b.Diffs[i] = TrimDiff(d, DiffContext)
		size += len(b.Diffs[i].New)
		if b.Diffs[i].Old != nil {
			size += len(*b.Diffs[i].Old)
		}
	}
	if size > MaxDiffBytes {
		share := MaxDiffBytes / (2 * max(1, len(b.Diffs)))
		for i, d := range b.Diffs {
			d.New = cut(d.New, share)
			if d.Old != nil {
				o := cut(*d.Old, share)
				d.Old = &o
			}
			b.Diffs[i] = d
		}
	}
	if len(t.Diffs) == 0 {
		b.Diffs = t.Diffs
	}
	b.Output = cut(t.Output, MaxOutputBytes)
	if len(t.Input) > MaxInputBytes {
		// Still JSON (clients read rawInput as JSON): the start of the
		// arguments as a string.
		b.Input, _ = json.Marshal(map[string]string{"cut": string(cut(string(t.Input), MaxInputBytes/2))})
	}
	return &b
}

// cut keeps the first n bytes of s (on a line or rune boundary) and says
// the rest was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	k := n
	if i := strings.LastIndexByte(s[:n], '\n'); i > n/2 {
		k = i + 1
	}
	for k > 0 && k < len(s) && s[k]&0xC0 == 0x80 {
		k-- // not inside a UTF-8 character
	}
	return s[:k] + cutNote
}

// TrimDiff cuts a diff down to its changed lines and ctx unchanged lines
// on each side: what an editor shows of it. A created file (Old nil) is
// kept as it is (Bound limits its size).
func TrimDiff(d tools.Diff, ctx int) tools.Diff {
	if d.Old == nil {
		return d
	}
	old, nw := strings.SplitAfter(*d.Old, "\n"), strings.SplitAfter(d.New, "\n")
	p := 0
	for p < len(old) && p < len(nw) && old[p] == nw[p] {
		p++
	}
	q := 0
	for q < len(old)-p && q < len(nw)-p && old[len(old)-1-q] == nw[len(nw)-1-q] {
		q++
	}
	start := max(0, p-ctx)
	skip := max(0, q-ctx)
	o := strings.Join(old[start:len(old)-skip], "")
	return tools.Diff{Path: d.Path, Old: &o, New: strings.Join(nw[start:len(nw)-skip], "")}
}
