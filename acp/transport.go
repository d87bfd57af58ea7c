package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/sourcegraph/conc/panics"

	"github.com/mm-agent/mm/fileedit/disk"
)

// MaxMessage is the largest JSON-RPC message accepted. The SDK's own line
// reader stops the connection past 10 MiB, so the limit must stay under
// that; mm answers an error instead, with the request's id, and goes on.
// 8 MiB of embedded context is already some 2 million tokens, far past
// the window of any model mm serves: a larger limit would only move the
// refusal to the context budget, later and with less to say.
const MaxMessage = 8 << 20

// drainWait bounds how long, after EOF on stdin, mm waits for the answers
// to the requests it had already read (their turns are cancelled, so this
// is normally milliseconds).
const drainWait = 10 * time.Second

// Serve runs the agent on the given stream until in reaches EOF or ctx is
// done, then stops every session (cancelling running turns) and returns.
//
// EOF is not handed to the SDK at once: the SDK would stop its connection
// and drop the requests it had read but not answered yet (`printf
// '<initialize>\n' | mm acp` would print nothing). Instead the running turns
// are cancelled, every request already read gets its answer, and only
// then does the SDK see the end of its input.
func Serve(ctx context.Context, a *Agent, in io.Reader, out io.Writer) error {
	reqs := newInflight()
	opens := &openings{}
	w := &lockedWriter{w: out, answered: func(id json.RawMessage, line []byte) {
		reqs.done(id)
		if sid, ok := opens.answered(id, line); ok {
			a.answered(sid)
		}
	}}
	forwarded := func(id json.RawMessage, msg []byte) []byte {
		if id == nil && a.takeAnswer(msg) {
			return nil // the answer to a request of mm's own (elicit.go)
		}
		if id != nil {
			reqs.add(id)
			opens.expect(id, msg)
		}
		if a.providerCall(id, msg) || a.steerCall(id, msg) {
			return nil // answered by mm itself (providers.go, steering.go)
		}
		return a.arrive(msg)
	}
	pr, pw := io.Pipe()
	conn := sdk.NewAgentSideConnection(a, w, pr)
	a.mu.Lock()
	a.out = w
	a.mu.Unlock()
	conn.SetLogger(a.log)
	a.setConn(conn)

	// The reader is not joined: a read of stdin cannot be interrupted, and
	// after ctx is done the process exits with it still blocked.
	filterDone := make(chan error, 1)
	go func() {
		var err error
		if r := panics.Try(func() { err = filter(in, pw, w, a.log, forwarded) }); r != nil {
			a.log.Error("stdin reader panicked", "panic", r.Value, "stack", string(r.Stack))
			err = fmt.Errorf("internal error reading stdin: %v", r.Value)
		}
		filterDone <- err
	}()
	var err error
	select {
	case err = <-filterDone:
		a.inputEnded()
		a.cancelTurns()
		if !reqs.wait(drainWait) {
			a.log.Warn("stdin closed with requests still unanswered", "waited", drainWait)
		}
		pw.CloseWithError(io.EOF)
		<-conn.Done()
	case <-conn.Done():
	case <-ctx.Done():
		err = ctx.Err()
		pr.Close() // the SDK sees the stream end and cancels every request
		<-conn.Done()
	}
	a.closeAll()
	return err
}

// inflight counts the requests forwarded to the SDK and not answered yet,
// by JSON-RPC id.
type inflight struct {
	mu      sync.Mutex
	ids     map[string]int
	changed chan struct{} // closed and replaced at each answer
}

func newInflight() *inflight {
	return &inflight{ids: map[string]int{}, changed: make(chan struct{})}
}

func (f *inflight) add(id json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids[string(id)]++
}

func (f *inflight) done(id json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := string(id)
	if f.ids[k] == 0 {
		return // an answer of the filter's own, or to an unknown id
	}
	if f.ids[k]--; f.ids[k] == 0 {
		delete(f.ids, k)
	}
	close(f.changed)
	f.changed = make(chan struct{})
}

// wait reports whether every request was answered within d.
func (f *inflight) wait(d time.Duration) bool {
	timeout := time.NewTimer(d)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		n, changed := len(f.ids), f.changed
		f.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-changed:
		case <-timeout.C:
			return false
		}
	}
}

// lockedWriter serialises whole-line writes of the SDK and of the filter,
// so an error answer never interleaves with an SDK message, and reports
// the id (and the line) of each answer written. An answer is told from a
// notification or a request by the parsed message — an id and no method
// — not by the SDK's field order.
type lockedWriter struct {
	mu       sync.Mutex
	w        io.Writer
	answered func(id json.RawMessage, line []byte)
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if l.answered != nil && bytes.Contains(p, []byte(`"id"`)) { // else it cannot be an answer
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(p, &m) == nil && m.Method == "" && len(m.ID) > 0 && string(m.ID) != "null" {
			l.answered(compactID(m.ID), p)
		}
	}
	return n, err
}

// openings remembers the requests that open a session (session/new,
// load, resume) until their answer is written, so that the updates that
// must follow the answer (the / menu of commands) are sent after it, not before.
type openings struct {
	mu      sync.Mutex
	pending map[string]string // request id → session id ("" for session/new)
}

func (o *openings) expect(id json.RawMessage, msg []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			SessionID string `json:"sessionId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	switch m.Method {
	case sdk.AgentMethodSessionNew, sdk.AgentMethodSessionLoad, sdk.AgentMethodSessionResume, sdk.AgentMethodSessionFork:
	default:
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.pending == nil {
		o.pending = map[string]string{}
	}
	o.pending[string(id)] = m.Params.SessionID
}

// answered reports whether line is the successful answer to an expected
// request, and the session it opened.
func (o *openings) answered(id json.RawMessage, line []byte) (string, bool) {
	o.mu.Lock()
	sid, ok := o.pending[string(id)]
	delete(o.pending, string(id))
	o.mu.Unlock()
	if !ok {
		return "", false
	}
	var m struct {
		Result *struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil || m.Result == nil {
		return "", false // an error answer: no session was opened
	}
	if sid == "" {
		sid = m.Result.SessionID
	}
	return sid, sid != ""
}

// compactID is the id's canonical text, the key of inflight.
func compactID(id json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return id
	}
	return b.Bytes()
}

// filter copies well-formed JSON-RPC lines from in to sdkIn and answers the
// others itself: a line that is not JSON gets -32700, a line that is
// JSON but not a request/response/notification object gets -32600, a line
// over MaxMessage gets -32600 and is skipped without being buffered whole.
//
// forwarded, when not nil, gets each message passed on, with its id (nil
// for a notification or a response), in input order, and returns the
// message to pass on, nil for none.
func filter(in io.Reader, sdkIn io.Writer, out io.Writer, log *slog.Logger, forwarded func(id json.RawMessage, msg []byte) []byte) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	// pending holds what goes on to the SDK. The lines already read are
	// all seen by forwarded before any of them goes on, so that a
	// session/cancel written right behind its prompt marks the prompt
	// before the prompt can start, however late the reader is scheduled
	// (a turn on a fast server can end in the meantime).
	var pending [][]byte
	flush := func() error {
		for _, m := range pending {
			if _, err := sdkIn.Write(m); err != nil {
				return err
			}
		}
		pending = pending[:0]
		return nil
	}
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxMessage {
			// Skipped unbuffered; its id is picked up on the way, so the
			// client's request resolves (with an error) instead of hanging.
			var sc idScan
			sc.feed(line)
			sc.feed(chunk)
			n := len(line) + len(chunk)
			line = line[:0]
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = r.ReadSlice('\n')
				n += len(chunk)
				sc.feed(chunk)
			}
			log.Warn("dropped an oversized message", "bytes", n, "id", string(sc.id))
			reply(out, sc.id, -32600, fmt.Sprintf("message too large (%s; mm takes at most %s per message) — attach big files as links (resource_link) instead of embedding their content", disk.Human(int64(n)), disk.Human(MaxMessage)))
		} else {
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				// A long line still coming: what came before it goes on.
				if flush() != nil {
					return nil
				}
				continue
			}
			if msg := bytes.TrimSpace(line); len(msg) > 0 {
				if id, code, text := check(msg); code != 0 {
					log.Warn("rejected a malformed message", "error", text, "bytes", len(msg))
					reply(out, idOf(msg), code, text)
				} else {
					if forwarded != nil {
						msg = forwarded(id, msg)
					}
					if msg != nil { // nil: taken, not the SDK's to see
						pending = append(pending, append(bytes.Clone(msg), '\n'))
					}
				}
			}
			line = line[:0]
		}
		if !lineBuffered(r) || err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if flush() != nil {
				return nil // the connection is closing
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return fmt.Errorf("read stdin: %w", err)
		}
	}
}

// lineBuffered reports whether a whole line is already read into r.
func lineBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// check says whether msg is a JSON-RPC object the SDK can route, and
// gives the compacted id of a request (nil for a notification or a
// response). Every request gets exactly one answer (JSON-RPC 2.0 §5):
// what the SDK would take for a response or a notification, or answer
// with an id the client cannot match, is answered here.
func check(msg []byte) (id json.RawMessage, code int, text string) {
	if !json.Valid(msg) {
		return nil, -32700, "parse error: the line is not valid JSON"
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if msg[0] != '{' || json.Unmarshal(msg, &m) != nil {
		return nil, -32600, "invalid request: expected one JSON-RPC object per line, with a string method"
	}
	if m.Method == nil && m.ID == nil {
		return nil, -32600, "invalid request: no method and no id"
	}
	if m.Method == nil && m.Result == nil && m.Error == nil {
		return nil, -32600, "invalid request: no method"
	}
	if m.Method == nil {
		return nil, 0, "" // a response to one of mm's requests
	}
	if *m.Method == "" {
		// The SDK would take it for a response and never answer.
		return nil, -32600, "invalid request: the method name is empty"
	}
	if m.ID != nil && !scalarID(m.ID) {
		// A null id would make it a notification the SDK never answers;
		// an object or array cannot be matched.
		return nil, -32600, "invalid request: the id must be a string or a number"
	}
	if m.ID != nil {
		id = compactID(m.ID)
	}
	return id, 0, ""
}

// scalarID reports whether a raw id is a string or a number.
func scalarID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9')
}

// idOf recovers the id of a malformed message when it is one the client
// can match (a string or a number); otherwise the answer's id is null.
func idOf(msg []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &m) == nil && scalarID(m.ID) {
		return m.ID
	}
	return nil
}

func reply(out io.Writer, id json.RawMessage, code int, text string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, map[string]any{"code": code, "message": text}})
	out.Write(append(b, '\n'))
}

// idScan finds the top-level "id" of a JSON-RPC message as the message
// streams past, holding a few bytes only: a message too large to keep is
// still answered with its request's id. A message that is not JSON, or
// whose id is not a string or a number, leaves id nil.
type idScan struct {
	depth      int
	inStr, esc bool
	expectKey  bool   // the next string at depth 1 is a key
	keying     bool   // reading that key
	key        []byte // the key read (its first bytes)
	capturing  bool   // reading the value of "id"
	val        []byte
	id         json.RawMessage
	done       bool
}

// maxIDBytes bounds the id kept: ids are short.
const maxIDBytes = 256

func (s *idScan) feed(p []byte) {
	for _, c := range p {
		if s.done {
			return
		}
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.keying {
					s.keying = false
					continue
				}
			}
			s.take(c)
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.expectKey {
				s.keying, s.key = true, s.key[:0]
				continue
			}
			s.take(c)
		case '{', '[':
			if s.capturing && s.depth == 1 {
				s.capturing, s.val = false, nil // an object or array: no usable id
			}
			s.depth++
			s.expectKey = s.depth == 1 && c == '{'
		case '}', ']':
			if s.depth == 1 {
				s.finish()
			}
			s.depth--
		case ':':
			if s.depth == 1 {
				s.expectKey = false
				s.capturing, s.val = string(s.key) == "id", s.val[:0]
			}
		case ',':
			if s.depth == 1 {
				s.finish()
				s.expectKey = true
			}
		default:
			s.take(c)
		}
	}
}

// take keeps a byte of the id's value, or of a key being read.
func (s *idScan) take(c byte) {
	switch {
	case s.keying && len(s.key) < 8:
		s.key = append(s.key, c)
	case s.keying:
		s.key = append(s.key[:0], "too long"...)
	case s.capturing && s.depth == 1 && len(s.val) < maxIDBytes:
		s.val = append(s.val, c)
	case s.capturing && s.depth == 1:
		s.capturing, s.val = false, nil
	}
}

// finish ends the value read at depth 1: the id when it was one.
func (s *idScan) finish() {
	if !s.capturing {
		return
	}
	s.capturing = false
	id := bytes.TrimSpace(s.val)
	if scalarID(id) && json.Valid(id) {
		s.id, s.done = compactID(append(json.RawMessage(nil), id...)), true
	}
}
