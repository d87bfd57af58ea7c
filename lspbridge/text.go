package lspbridge

import (
	"bytes"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// LSP positions count UTF-16 units (the only encoding every server
// supports); mm's are 1-based lines and columns in characters. These
// helpers convert between them and byte offsets.

// lineAt returns the byte offsets of 0-based line n (without its newline);
// ok is false past the end.
func lineAt(text []byte, n int) (start, end int, ok bool) {
	for i := 0; i < n; i++ {
		j := bytes.IndexByte(text[start:], '\n')
		if j < 0 {
			return 0, 0, false
		}
		start += j + 1
	}
	end = start + lineLen(text[start:])
	return start, end, true
}

func lineLen(b []byte) int {
	if j := bytes.IndexByte(b, '\n'); j >= 0 {
		return j
	}
	return len(b)
}

// offsetOf converts an LSP position to a byte offset, clamped to the line
// and the text as LSP asks.
func offsetOf(text []byte, p protocol.Position) int {
	start, end, ok := lineAt(text, int(p.Line))
	if !ok {
		return len(text)
	}
	units, i := 0, start
	for i < end && units < int(p.Character) {
		r, size := utf8.DecodeRune(text[i:])
		units += max(1, utf16.RuneLen(r))
		i += size
	}
	return i
}

// positionOf converts a byte offset to an LSP position.
func positionOf(text []byte, off int) protocol.Position {
	off = min(off, len(text))
	line := bytes.Count(text[:off], []byte("\n"))
	start := bytes.LastIndexByte(text[:off], '\n') + 1
	units := 0
	for i := start; i < off; {
		r, size := utf8.DecodeRune(text[i:])
		units += max(1, utf16.RuneLen(r))
		i += size
	}
	return protocol.Position{Line: uint32(line), Character: uint32(units)}
}

// column is the 1-based character column of byte offset off on its line.
func column(text []byte, off int) int {
	start := bytes.LastIndexByte(text[:off], '\n') + 1
	return utf8.RuneCount(text[start:off]) + 1
}

// charOffset is the byte offset of the 1-based character column col on
// 1-based line; ok is false when the line does not exist.
func charOffset(text []byte, line, col int) (int, bool) {
	start, end, ok := lineAt(text, line-1)
	if !ok {
		return 0, false
	}
	i := start
	for c := 1; c < col && i < end; c++ {
		_, size := utf8.DecodeRune(text[i:])
		i += size
	}
	return i, true
}

func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// findWord returns the byte offsets of whole-word occurrences of word in
// text[from:to].
func findWord(text []byte, word string, from, to int) []int {
	var out []int
	w := []byte(word)
	for i := from; i < to; {
		j := bytes.Index(text[i:to], w)
		if j < 0 {
			break
		}
		at := i + j
		before, _ := utf8.DecodeLastRune(text[:at])
		after, _ := utf8.DecodeRune(text[at+len(w):])
		if (at == 0 || !isIdentRune(before)) && (at+len(w) == len(text) || !isIdentRune(after)) {
			out = append(out, at)
		}
		i = at + len(w)
	}
	return out
}

// lineText is the trimmed text of 1-based line n, bounded for display.
func lineText(text []byte, n int) string {
	start, end, ok := lineAt(text, n-1)
	if !ok {
		return ""
	}
	s := string(bytes.TrimSpace(text[start:end]))
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
