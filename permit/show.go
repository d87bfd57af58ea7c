package permit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Everything mm shows that came from the workspace, the model or a server
// — a permission question, the trust summary on the terminal and in the
// editor's form, a title — goes through Visible, and the question through
// Bound: the text cannot hide, move or erase what is around it, and a
// line of megabytes cannot become a question of megabytes.

// Visible makes every character of s that a terminal or an editor would
// hide, move or reorder show as a marker: control characters (CR, ESC,
// tabs…; newlines are kept), bidirectional and zero-width characters and
// other invisible formatting, unusual spaces, bytes that are not UTF-8,
// and long runs of spaces. A question built from Visible text shows the
// user what will really run: the markers (⟨ESC⟩, ⟨U+202E⟩) cannot hide
// anything themselves, since a marker typed literally shows as itself.
func Visible(s string) string {
	var b strings.Builder
	spaces := 0
	flush := func() {
		if spaces >= 8 {
			fmt.Fprintf(&b, "⟨%d spaces⟩", spaces)
		} else {
			b.WriteString(strings.Repeat(" ", spaces))
		}
		spaces = 0
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == ' ' {
			spaces++
			i += size
			continue
		}
		flush()
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "⟨0x%02X⟩", s[i])
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteString("⟨TAB⟩")
		case r == '\r':
			b.WriteString("⟨CR⟩")
		case r == 0x1b:
			b.WriteString("⟨ESC⟩")
		case hidden(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	flush()
	return b.String()
}

// hidden reports whether r is invisible or rearranges the text around it.
func hidden(r rune) bool {
	switch {
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Zl, r), unicode.Is(unicode.Zp, r):
		return true
	case unicode.Is(unicode.Zs, r) && r != ' ':
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF: // variation selectors
		return true
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, r == 0x2800: // blank fillers
		return true
	}
	return false
}

// MaxShown is how many bytes of untrusted text one question or summary
// shows (Bound).
const MaxShown = 64 << 10

// Bound keeps at most max bytes of s (MaxShown when max is 0): its start
// and its end, cut between characters, with a line in the middle saying
// how much was left out. The cut text is never shown half: only whole
// characters, and Visible markers are not split if s is already visible.
func Bound(s string, max int) string {
	if max <= 0 {
		max = MaxShown
	}
	if len(s) <= max {
		return s
	}
	head, tail := max*3/4, max/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	from := len(s) - tail
	for from < len(s) && !utf8.RuneStart(s[from]) {
		from++
	}
	return s[:head] + fmt.Sprintf("\n⟨… %d bytes not shown …⟩\n", from-head) + s[from:]
}

// Shown is untrusted text as mm shows it: Visible, then Bound.
func Shown(s string) string { return Bound(Visible(s), 0) }
