package tools

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

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
