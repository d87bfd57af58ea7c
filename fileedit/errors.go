package fileedit

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinels classify a refused edit, for callers that count or route
// refusals (struggle signals, tests). Compare with errors.Is on the *Error
// returned by Apply; the text for the model is Error() itself.
var (
	// ErrNoEdits: the call carried no edit at all.
	ErrNoEdits = errors.New("no edits")
	// ErrEmptyOld: an edit has an empty old text.
	ErrEmptyOld = errors.New("empty old text")
	// ErrUnchanged: old equals new, or the edits leave the file as it was.
	ErrUnchanged = errors.New("edit changes nothing")
	// ErrNotFound: old is in the file in none of the three passes.
	ErrNotFound = errors.New("old text not found")
	// ErrAfterEdit: old is not in the original file but appears once another
	// edit of the same call is applied (all edits see the original).
	ErrAfterEdit = errors.New("old text appears only after another edit")
	// ErrAmbiguous: old matches two places or more in the pass that found it.
	ErrAmbiguous = errors.New("old text matches several places")
	// ErrOverlap: two edits of the same call touch the same text.
	ErrOverlap = errors.New("edits overlap")
	// ErrBinary: the file is not text.
	ErrBinary = errors.New("binary file")
)

// Problem is one reason a call was refused.
type Problem struct {
	// Edit is the 1-based index of the edit in the call, 0 when the problem
	// concerns the whole call.
	Edit int
	// Kind is one of the sentinels above.
	Kind error
	// Text is the repair instruction for this problem, without the
	// "[error: …]" frame and without the "edit N:" prefix.
	Text string
}

// Error is a refused call: nothing was applied. Its Error() text is the
// repair instruction handed to the model as the tool result, so it is short,
// exact and names what to copy or change.
type Error struct {
	// Path is the file name used in the messages.
	Path string
	// Problems lists every reason, in edit order; never empty.
	Problems []Problem
	// edits is the number of edits in the call: with one, the "edit 1:"
	// prefix is noise for the model and is left out.
	edits int
}

// Error renders the repair text: "[error: edit 2: old text not found in
// main.go. … Nothing was changed.]".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("[error: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("\n")
		}
		if p.Edit > 0 && e.edits > 1 {
			b.WriteString("edit " + strconv.Itoa(p.Edit) + ": ")
		}
		b.WriteString(p.Text)
	}
	switch {
	case e.edits > 1:
		b.WriteString("\nNo edit was applied: send all " + strconv.Itoa(e.edits) + " edits again with this fixed.")
	case e.edits == 1:
		b.WriteString("\nNothing was changed.")
	}
	b.WriteString("]")
	return b.String()
}

// Is reports whether any problem is of kind target, so that
// errors.Is(err, fileedit.ErrNotFound) works on a refused call.
func (e *Error) Is(target error) bool {
	for _, p := range e.Problems {
		if p.Kind == target {
			return true
		}
	}
	return false
}
