package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// style is what SGR sequences set on a character.
type style struct {
	fg        int // 0: the default, else an SGR colour (31 red, 92 bright green…)
	bold, dim bool
}

type cell struct {
	r  rune
	st style
}

// screen is the little of a terminal that line mode uses: text,
// carriage returns, tabs, wrapping at cols, colours, bold and dim, erasing
// a line and moving the cursor. Everything scrolls into lines; nothing is
// cleared, so the picture is the whole run.
type screen struct {
	lines    [][]cell
	row, col int
	cur      style
}

// write interprets b as a terminal would.
func (s *screen) write(b []byte) {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		switch r {
		case '\x1b':
			b = s.escape(b)
		case '\r':
			s.col = 0
		case '\n':
			s.row++
		case '\b':
			s.col = max(0, s.col-1)
		case '\t':
			s.col = min(cols-1, (s.col/8+1)*8)
		case '\a':
		default:
			if r < ' ' {
				continue
			}
			if s.col >= cols {
				s.row, s.col = s.row+1, 0
			}
			s.put(r)
		}
	}
}

func (s *screen) line() []cell {
	for len(s.lines) <= s.row {
		s.lines = append(s.lines, nil)
	}
	return s.lines[s.row]
}

func (s *screen) put(r rune) {
	l := s.line()
	for len(l) <= s.col {
		l = append(l, cell{r: ' '})
	}
	l[s.col] = cell{r: r, st: s.cur}
	s.lines[s.row] = l
	s.col++
}

// escape reads one escape sequence (after ESC) and returns the rest.
func (s *screen) escape(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	switch b[0] {
	case '[':
		end := 1
		for end < len(b) && (b[end] < 0x40 || b[end] > 0x7e) {
			end++
		}
		if end == len(b) {
			return nil
		}
		s.csi(string(b[1:end]), b[end])
		return b[end+1:]
	case ']': // an operating system command, up to BEL or ESC \
		for i := 1; i < len(b); i++ {
			if b[i] == '\a' {
				return b[i+1:]
			}
			if b[i] == '\x1b' && i+1 < len(b) && b[i+1] == '\\' {
				return b[i+2:]
			}
		}
		return nil
	}
	return b[1:]
}

func (s *screen) csi(params string, final byte) {
	if strings.HasPrefix(params, "?") { // private modes: the cursor's visibility and the like
		return
	}
	var n []int
	for _, p := range strings.Split(params, ";") {
		v, _ := strconv.Atoi(p)
		n = append(n, v)
	}
	arg := max(1, n[0])
	switch final {
	case 'm':
		s.sgr(n)
	case 'K':
		l := s.line()
		switch n[0] {
		case 0:
			s.lines[s.row] = l[:min(len(l), s.col)]
		case 1:
			for i := 0; i <= s.col && i < len(l); i++ {
				l[i] = cell{r: ' '}
			}
		case 2:
			s.lines[s.row] = nil
		}
	case 'A':
		s.row = max(0, s.row-arg)
	case 'B':
		s.row += arg
	case 'C':
		s.col = min(cols-1, s.col+arg)
	case 'D':
		s.col = max(0, s.col-arg)
	case 'G':
		s.col = min(cols-1, arg-1)
	}
}

func (s *screen) sgr(n []int) {
	for _, v := range n {
		switch {
		case v == 0:
			s.cur = style{}
		case v == 1:
			s.cur.bold = true
		case v == 2:
			s.cur.dim = true
		case v == 22:
			s.cur.bold, s.cur.dim = false, false
		case v == 39:
			s.cur.fg = 0
		case v >= 30 && v <= 37, v >= 90 && v <= 97:
			s.cur.fg = v
		}
	}
}

// text is the screen's lines as plain text, trailing blank lines left out.
func (s *screen) text() []string {
	var out []string
	for _, l := range s.lines {
		var b strings.Builder
		for _, c := range l {
			b.WriteRune(c.r)
		}
		out = append(out, strings.TrimRight(b.String(), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// Colours of a dark terminal (GitHub's dark theme).
var palette = map[int]string{
	30: "#484f58", 31: "#ff7b72", 32: "#3fb950", 33: "#d29922", 34: "#58a6ff", 35: "#bc8cff", 36: "#39c5cf", 37: "#b1bac4",
	90: "#6e7681", 91: "#ffa198", 92: "#56d364", 93: "#e3b341", 94: "#79c0ff", 95: "#d2a8ff", 96: "#56d4dd", 97: "#ffffff",
}

const (
	fontSize   = 13
	lineHeight = 18
	charWidth  = 7.8 // 0.6 em: the advance of the usual monospace fonts
	pad        = 16
	titleBar   = 30
)

// svg draws the screen as a terminal window of text lines.
func (s *screen) svg(title string) []byte {
	lines := s.text()
	width := 0
	for _, l := range lines {
		width = max(width, utf8.RuneCountInString(l))
	}
	w := int(float64(max(width, 60))*charWidth) + 2*pad
	h := titleBar + len(lines)*lineHeight + pad
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`+"\n", w, h, w, h, esc(title))
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	b.WriteString("<style>\n")
	fmt.Fprintf(&b, "text{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,'DejaVu Sans Mono','Liberation Mono',monospace;font-size:%dpx;fill:#e6edf3;white-space:pre}\n", fontSize)
	b.WriteString(".b{font-weight:bold}.d{fill:#8b949e}\n")
	for _, k := range slices.Sorted(maps.Keys(palette)) {
		fmt.Fprintf(&b, ".c%d{fill:%s}", k, palette[k])
	}
	b.WriteString("\n</style>\n")
	fmt.Fprintf(&b, `<rect width="%d" height="%d" rx="8" fill="#0d1117"/>`+"\n", w, h)
	for i, c := range []string{"#ff5f56", "#ffbd2e", "#27c93f"} {
		fmt.Fprintf(&b, `<circle cx="%d" cy="15" r="5.5" fill="%s"/>`, pad+6+i*18, c)
	}
	b.WriteString("\n")
	for i, l := range s.lines[:len(lines)] {
		fmt.Fprintf(&b, `<text x="%d" y="%d" xml:space="preserve">`, pad, titleBar+i*lineHeight+fontSize)
		writeSpans(&b, trimCells(l))
		b.WriteString("</text>\n")
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// writeSpans writes a line as runs of one style each.
func writeSpans(b *bytes.Buffer, l []cell) {
	for i := 0; i < len(l); {
		j := i
		var run strings.Builder
		for j < len(l) && l[j].st == l[i].st {
			run.WriteRune(l[j].r)
			j++
		}
		if class := l[i].st.class(); class != "" {
			fmt.Fprintf(b, `<tspan class="%s">%s</tspan>`, class, esc(run.String()))
		} else {
			b.WriteString(esc(run.String()))
		}
		i = j
	}
}

func (st style) class() string {
	var c []string
	if st.bold {
		c = append(c, "b")
	}
	switch {
	case st.fg != 0:
		c = append(c, "c"+strconv.Itoa(st.fg))
	case st.dim:
		c = append(c, "d")
	}
	return strings.Join(c, " ")
}

func trimCells(l []cell) []cell {
	for len(l) > 0 && l[len(l)-1].r == ' ' {
		l = l[:len(l)-1]
	}
	return l
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// textLines reads the lines of text back from a picture, which also
// proves it is well-formed XML.
func textLines(svg []byte) ([]string, error) {
	d := xml.NewDecoder(bytes.NewReader(svg))
	var lines []string
	depth := 0 // inside a <text>
	var cur strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return nil, fmt.Errorf("the picture is not well-formed: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "text" {
				depth++
				cur.Reset()
			}
		case xml.EndElement:
			if t.Name.Local == "text" {
				depth--
				lines = append(lines, cur.String())
			}
		case xml.CharData:
			if depth > 0 {
				cur.Write(t)
			}
		}
	}
}
