package line

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// steerInput stands between the terminal and the line editor. While a
// prompt or a question is open the editor reads what is typed (the
// terminal in raw mode). While a turn runs nothing reads: the terminal
// is in its own line mode, echoing what is typed, and each line typed
// then is read here and steers the turn — the model reads it before its
// next call. A line the turn no longer takes (it ended meanwhile) goes
// to the editor, as the next prompt.
type steerInput struct {
	src io.Reader
	pr  *io.PipeReader // the editor's side
	pw  *io.PipeWriter

	mu      sync.Mutex
	steerTo func(line string) bool // set while a turn runs and no question is open
	partial []byte                 // a line typed in line mode, not ended yet
}

// newSteerInput starts reading src. The reading goroutine is not joined:
// a read of a terminal cannot be interrupted, and the REPL ends the
// process (as the ACP reader of stdin is not joined either).
func newSteerInput(src io.Reader) *steerInput {
	pr, pw := io.Pipe()
	s := &steerInput{src: src, pr: pr, pw: pw}
	go s.pump()
	return s
}

// editor is what the line editor reads.
func (s *steerInput) editor() io.ReadCloser { return s.pr }

// steer sends the lines typed from now on to f (the running turn); nil
// sends them to the editor again.
func (s *steerInput) steer(f func(line string) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steerTo = f
}

func (s *steerInput) pump() {
	buf := make([]byte, 4096)
	for {
		n, err := s.src.Read(buf)
		if n > 0 {
			if werr := s.route(buf[:n]); werr != nil {
				return // the editor is closed
			}
		}
		if err != nil {
			// End of input (Ctrl-D in line mode included): the editor
			// sees it and the REPL leaves, as Ctrl-D at the prompt does.
			s.pw.CloseWithError(err)
			return
		}
	}
}

// route hands what was read to the turn, line by line, or to the editor.
func (s *steerInput) route(b []byte) error {
	s.mu.Lock()
	f := s.steerTo
	if f == nil {
		b = append(s.partial, b...)
		s.partial = nil
		s.mu.Unlock()
		_, err := s.pw.Write(b)
		return err
	}
	s.partial = append(s.partial, b...)
	var lines []string
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	s.mu.Unlock()
	for _, l := range lines {
		text := strings.TrimSpace(strings.TrimSuffix(l, "\r"))
		if text == "" {
			continue
		}
		if !f(text) {
			// The turn ended before it could take the line: it is the
			// next prompt.
			if _, err := s.pw.Write([]byte(text + "\n")); err != nil {
				return err
			}
		}
	}
	return nil
}
