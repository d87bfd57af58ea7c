package fileedit

import (
	"bytes"
	"strings"
)

// bom is the UTF-8 byte order mark some Windows editors put at the start of
// a file. A model never types it, so it is set aside before matching.
const bom = "\ufeff"

// textFile is a file's content as the matcher sees it: without its BOM and
// with every CRLF turned into LF, so that an old text written with "\n"
// matches a Windows file. It remembers where each removed CR was, so
// that edits are applied to the original bytes and everything outside the
// edited regions is kept byte for byte — mixed line endings included.
type textFile struct {
	raw  []byte
	text string // BOM removed, CRLF → LF
	head int    // bytes before text[0] in raw: len(bom) or 0
	// crAt holds, in increasing order, the index in text of each '\n' that
	// was preceded by a '\r' in raw.
	crAt []int
	// crlf tells which line ending inserted text gets: the file's dominant
	// one.
	crlf bool
}

func decode(raw []byte) *textFile {
	f := &textFile{raw: raw}
	body := raw
	if bytes.HasPrefix(body, []byte(bom)) {
		f.head = len(bom)
		body = body[len(bom):]
	}
	if bytes.IndexByte(body, '\r') < 0 {
		f.text = string(body)
		return f
	}
	var b strings.Builder
	b.Grow(len(body))
	lf := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			f.crAt = append(f.crAt, b.Len())
			continue
		}
		if c == '\n' {
			lf++
		}
		b.WriteByte(c)
	}
	f.text = b.String()
	f.crlf = len(f.crAt) > lf-len(f.crAt)
	return f
}

// rawOffset maps an offset in text to the offset in raw. An offset that
// points at a '\n' which had a '\r' before it maps to before the '\r', so
// that a region never splits a CRLF pair.
func (f *textFile) rawOffset(off int) int {
	// number of CRs removed before text offset off (strictly before the
	// '\n' they preceded).
	lo, hi := 0, len(f.crAt)
	for lo < hi {
		m := (lo + hi) / 2
		if f.crAt[m] < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return f.head + off + lo
}

// ending converts s, written with "\n", to the file's line ending.
func (f *textFile) ending(s string) string {
	if !f.crlf {
		return s
	}
	return strings.ReplaceAll(s, "\n", "\r\n")
}

// normalizeArg prepares an old or new text sent by the model the same way
// as the file: no BOM, LF line endings.
func normalizeArg(s string) string {
	s = strings.TrimPrefix(s, bom)
	if strings.Contains(s, "\r\n") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}
