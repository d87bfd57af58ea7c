package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxLine bounds one SSE line: a chunk never carries megabytes, so a
// longer line is a broken server, not an answer to buffer forever.
const maxLine = 16 << 20

// eventKind tells how an SSE event reached us.
type eventKind int

const (
	evData  eventKind = iota // data: lines (possibly after "event: <something>")
	evError                  // "event: error" + data, or an "error: …" line
	evBare                   // a JSON line without "data:" (Ollama)
)

type sseEvent struct {
	kind eventKind
	data []byte
}

// sseReader reads server-sent events leniently, because servers differ:
// comment pings (":") are skipped, "error:" lines and "event: error"
// become error events, a bare JSON line is an event of its own, data
// lines that each hold a complete JSON value are separate events even
// without the blank line between them, and a last event without its
// blank line is still delivered at EOF. openai-go's ssestream drops the
// bare line and the "error:" line and the last unterminated event, which
// is why mm reads the body itself.
type sseReader struct {
	r       *bufio.Reader
	line    []byte
	data    []byte
	hasData bool
	evType  string
	held    *sseEvent // an event found while another was pending
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next event; io.EOF at the clean end of the body, any
// other error as it came from the connection.
func (s *sseReader) next() (sseEvent, error) {
	if s.held != nil {
		ev := *s.held
		s.held = nil
		return ev, nil
	}
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) && s.hasData {
				return s.dispatch(), nil
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if s.hasData {
				return s.dispatch(), nil
			}
			s.evType = ""
			continue
		}
		switch line[0] {
		case ':':
			continue // comment: a keep-alive ping
		case '{', '[':
			ev := sseEvent{kind: evBare, data: bytes.Clone(line)}
			if s.hasData {
				s.held = &ev
				return s.dispatch(), nil
			}
			return ev, nil
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "data":
			if s.hasData && json.Valid(s.data) {
				// A server that forgot the blank line between events.
				ev := s.dispatch()
				s.data, s.hasData = append(s.data[:0], value...), true
				return ev, nil
			}
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			s.data, s.hasData = append(s.data, value...), true
		case "event":
			s.evType = string(value)
		case "error":
			ev := sseEvent{kind: evError, data: bytes.Clone(value)}
			if s.hasData {
				s.held = &ev
				return s.dispatch(), nil
			}
			return ev, nil
		}
		// id:, retry: and unknown fields are ignored, as the SSE spec says.
	}
}

func (s *sseReader) dispatch() sseEvent {
	ev := sseEvent{kind: evData, data: bytes.Clone(s.data)}
	if s.evType == "error" {
		ev.kind = evError
	}
	s.data, s.hasData, s.evType = s.data[:0], false, ""
	return ev
}

// readLine returns the next line without its line ending; the slice is
// valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		s.line = append(s.line, frag...)
		if len(s.line) > maxLine {
			return nil, fmt.Errorf("SSE line longer than %d bytes", maxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(s.line) > 0 {
				break // last line without its newline
			}
			return nil, err
		}
		break
	}
	l := bytes.TrimSuffix(s.line, []byte("\n"))
	l = bytes.TrimSuffix(l, []byte("\r"))
	return l, nil
}
