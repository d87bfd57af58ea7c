package bash

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// endBytes is how much of each end of a command's output is kept: the
// head says what the command did first, the tail usually holds the error
// or the summary, and the middle of a huge output is counted, not kept —
// in memory or on disk (30 s of `yes` would fill a tmpfs /tmp through an
// output file).
const endBytes = 1 << 20

// output is what a command printed, cleaned, as far as it was kept.
type output struct {
	head string // the start of the output, or all of it when unread is 0
	tail string // the end of the output; empty when unread is 0
	// unread is how many bytes between head and tail were not kept.
	unread int64
	total  int64 // how many bytes the command printed
}

// capture keeps what a command prints, as it prints it: the first and
// the last endBytes, and a count of the rest.
type capture struct {
	head  []byte
	ring  []byte // the last bytes after head, circular once full
	pos   int    // where the next byte goes in a full ring
	full  bool
	total int64
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if c.head == nil {
		c.head = make([]byte, 0, min(len(p), endBytes))
	}
	if room := endBytes - len(c.head); room > 0 {
		k := min(room, len(p))
		if len(c.head)+k > cap(c.head) {
			c.head = append(make([]byte, 0, endBytes), c.head...) // grown once
		}
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		if !c.full {
			if c.ring == nil {
				c.ring = make([]byte, 0, endBytes)
			}
			k := min(endBytes-len(c.ring), len(p))
			c.ring = append(c.ring, p[:k]...)
			p = p[k:]
			c.full = len(c.ring) == endBytes
			continue
		}
		k := copy(c.ring[c.pos:], p)
		c.pos = (c.pos + k) % endBytes
		p = p[k:]
	}
	return n, nil
}

// readFrom keeps what r gives until it ends or fails (its deadline).
func (c *capture) readFrom(r io.Reader) {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		c.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

// output is what was kept, cleaned.
func (c *capture) output() output {
	tail := c.ring // put in order in place: no second copy
	slices.Reverse(tail[:c.pos])
	slices.Reverse(tail[c.pos:])
	slices.Reverse(tail)
	c.pos = 0
	kept := int64(len(c.head) + len(tail))
	if kept == c.total {
		return output{head: clean(append(c.head, tail...)), total: c.total}
	}
	return output{head: clean(c.head), tail: clean(tail), unread: c.total - kept, total: c.total}
}

// clean turns raw terminal output into text worth paying tokens for:
// escape sequences (colours, cursor moves, hyperlinks) and backspace
// overstrikes are removed, a line redrawn with \r (progress bars) keeps
// only its last state, and invalid UTF-8 (binary output) is replaced.
func clean(b []byte) string {
	b = stripControls(b)
	if bytes.IndexByte(b, '\r') >= 0 {
		b = collapseCR(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// stripControls removes ANSI/VT escape sequences and backspace overstrikes.
// It scans bytes rather than using a regexp: it runs over up to 2 MiB.
func stripControls(b []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 && bytes.IndexByte(b, '\b') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		switch c := b[i]; c {
		case '\b':
			if n := len(out); n > 0 && out[n-1] != '\n' {
				_, size := utf8.DecodeLastRune(out)
				out = out[:n-size]
			}
			i++
		case 0x1b:
			i = skipEscape(b, i)
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// skipEscape returns the index just past the escape sequence at b[i].
func skipEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return len(b)
	}
	j := i + 2
	switch b[i+1] {
	case '[': // CSI: parameter and intermediate bytes, then one final byte
		for j < len(b) && b[j] >= 0x20 && b[j] <= 0x3f {
			j++
		}
		if j < len(b) && b[j] >= 0x40 && b[j] <= 0x7e {
			j++
		}
	case ']', 'P', '_', '^', 'X': // OSC, DCS, APC, PM, SOS: a string ended by BEL or ESC \
		for j < len(b) && b[j] != '\n' {
			if b[j] == 0x07 {
				return j + 1
			}
			if b[j] == 0x1b {
				if j+1 < len(b) && b[j+1] == '\\' {
					return j + 2
				}
				return j
			}
			j++
		}
	case '(', ')', '*', '+', '-', '.', '/', '#', '%', ' ': // designations: one more byte
		j++
	}
	return min(j, len(b))
}

// collapseCR keeps, for each line, what a terminal would show: the text
// after the last carriage return (a trailing \r, as in \r\n, is dropped).
func collapseCR(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		line, rest, found := bytes.Cut(b, []byte{'\n'})
		line = bytes.TrimRight(line, "\r")
		if k := bytes.LastIndexByte(line, '\r'); k >= 0 {
			line = line[k+1:]
		}
		out = append(out, line...)
		if found {
			out = append(out, '\n')
		}
		b = rest
	}
	return out
}

// render gives the text the model sees: at most max characters of output
// (plus the marker), keeping the head and the tail with a marker between
// them that says how much was cut and how to see it.
func (o output) render(max int) string {
	if o.unread == 0 && utf8.RuneCountInString(o.head) <= max {
		return o.head
	}
	keepHead := max * 2 / 5 // the tail gets more: it holds the error or the summary
	keepTail := max - keepHead
	head := headOf(o.head, keepHead)
	src := o.tail
	if o.unread == 0 {
		src = o.head
	}
	tail := tailOf(src, keepTail)
	var marker string
	if o.unread == 0 {
		cut := o.head[len(head) : len(o.head)-len(tail)]
		total := lineCount(o.head)
		marker = fmt.Sprintf("[… %d lines (%d chars) of %d cut here. To see them, run the command again with > out.txt 2>&1, then grep out.txt or print a line range (sed -n '100,200p' out.txt) …]",
			strings.Count(cut, "\n"), utf8.RuneCountInString(cut), total)
	} else {
		cut := int64(len(o.head)-len(head)) + o.unread + int64(len(src)-len(tail))
		marker = fmt.Sprintf("[… about %s cut here: the command printed %s and mm keeps only its first and last %s. To see it all, run the command again with > out.txt 2>&1, then grep out.txt or print a line range (sed -n '100,200p' out.txt) …]",
			humanBytes(cut), humanBytes(o.total), humanBytes(endBytes))
	}
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return head + marker + "\n" + tail
}

// headOf is the start of s, at most n characters, ending at a line break
// when one falls in the second half of it.
func headOf(s string, n int) string {
	end := byteIndexOfRune(s, n)
	h := s[:end]
	if k := strings.LastIndexByte(h, '\n'); k >= len(h)/2 {
		h = h[:k+1]
	}
	return h
}

// tailOf is the end of s, at most n characters, starting after a line
// break when one falls in the first half of it.
func tailOf(s string, n int) string {
	count := utf8.RuneCountInString(s)
	if count <= n {
		return s
	}
	t := s[byteIndexOfRune(s, count-n):]
	if k := strings.IndexByte(t, '\n'); k >= 0 && k < len(t)/2 {
		t = t[k+1:]
	}
	return t
}

// byteIndexOfRune is the byte offset of the n-th rune of s (len(s) past
// the end).
func byteIndexOfRune(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// lineCount counts lines, the last one whether or not it ends with \n.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
