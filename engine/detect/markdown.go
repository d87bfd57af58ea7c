package detect

// mdState follows just enough Markdown, byte by byte, to know whether the
// next byte is inside code: a fenced block (``` or ~~~ at the start of a
// line, up to three spaces in) or an inline code span (a run of backticks
// closed by a run of the same length, or by the end of the line). Text in
// code is quoted, not acted on, so the text tool-call detector ignores it.
type mdState struct {
	lineStart bool // only spaces so far on this line
	indent    int
	run       byte // '`' or '~' while a run is in progress
	runLen    int
	runAtBOL  bool // the run started a line (indent <= 3)
	fence     byte // the open fence's character, 0 when none
	fenceLen  int
	inline    int // length of the open inline code run, 0 when none
}

func newMD() mdState { return mdState{lineStart: true} }

func (m *mdState) feed(c byte) {
	if m.runLen > 0 && c != m.run {
		m.endRun()
	}
	switch c {
	case '`', '~':
		if m.runLen == 0 {
			m.run, m.runAtBOL = c, m.lineStart && m.indent <= 3
		}
		m.runLen++
		m.lineStart = false
	case '\n':
		m.lineStart, m.indent, m.inline = true, 0, 0
	case ' ':
		if m.lineStart {
			m.indent++
		}
	case '\t':
		if m.lineStart {
			m.indent += 4
		}
	default:
		m.lineStart = false
	}
}

// endRun decides what a finished run of ` or ~ was.
func (m *mdState) endRun() {
	n, ch, bol := m.runLen, m.run, m.runAtBOL
	m.runLen, m.run = 0, 0
	switch {
	case m.fence != 0:
		if ch == m.fence && n >= m.fenceLen && bol {
			m.fence, m.fenceLen = 0, 0
		}
	case bol && n >= 3:
		m.fence, m.fenceLen, m.inline = ch, n, 0
	case ch == '`' && m.inline == 0:
		m.inline = n
	case ch == '`' && m.inline == n:
		m.inline = 0
	}
}

// inCode reports whether a byte that is neither ` nor ~ would be in code
// if it came next.
func (m *mdState) inCode() bool {
	if m.runLen > 0 {
		m.endRun()
	}
	return m.fence != 0 || m.inline != 0
}

// openRun reports, without ending the run in progress, whether a ` or ~
// coming next would start a new run outside code: not inside a fence or
// an inline span, and not continuing a run.
func (m *mdState) openRun() bool {
	return m.runLen == 0 && m.fence == 0 && m.inline == 0
}
