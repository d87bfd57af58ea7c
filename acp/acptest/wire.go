package acptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wire is the editor's end of an agent spoken to in raw JSON-RPC lines,
// for the messages an SDK client would never send. It keeps every line
// the agent writes; a line that is not JSON fails the test at the next
// wait. The agent is stopped at once when the test ends.
type Wire struct {
	*link

	mu      sync.Mutex
	msgs    []Msg
	nonJSON []string
	eof     bool          // stdout ended
	changed chan struct{} // closed and replaced at each line

	taken map[string]int // answers Wait returned, by id (the test's goroutine only)
}

// Msg is one line the agent wrote.
type Msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	// Line is the line as written.
	Line string `json:"-"`
}

// IsAnswer reports whether m answers a request (rather than being a
// request or a notification of the agent's own).
func (m Msg) IsAnswer() bool { return m.Method == "" }

// IDKey is the compact text of m's id: `1`, `"a"`, or `null` for none.
func (m Msg) IDKey() string {
	var b bytes.Buffer
	if len(m.ID) == 0 || json.Compact(&b, m.ID) != nil {
		return "null"
	}
	return b.String()
}

// ServeWire serves agent in this process and speaks raw lines to it.
func ServeWire(t testing.TB, agent ServeFunc) *Wire {
	t.Helper()
	return wire(t, serveLink(t, agent))
}

// StartWire starts cmd, an agent speaking ACP on its stdio, and speaks
// raw lines to it.
func StartWire(t testing.TB, cmd *exec.Cmd) *Wire {
	t.Helper()
	return wire(t, startLink(t, cmd))
}

func wire(t testing.TB, l *link) *Wire {
	w := &Wire{link: l, changed: make(chan struct{}), taken: map[string]int{}}
	t.Cleanup(func() {
		l.stop()
		l.logStderr()
	})
	go w.read()
	return w
}

// read keeps every line the agent writes, until EOF.
func (w *Wire) read() {
	sc := bufio.NewScanner(w.stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m Msg
		err := json.Unmarshal(sc.Bytes(), &m)
		m.Line = sc.Text()
		w.mu.Lock()
		if err != nil {
			w.nonJSON = append(w.nonJSON, m.Line)
		} else {
			w.msgs = append(w.msgs, m)
		}
		w.wake()
		w.mu.Unlock()
	}
	io.Copy(io.Discard, w.stdout) // a line too long to scan
	w.mu.Lock()
	w.eof = true
	w.wake()
	w.mu.Unlock()
}

func (w *Wire) wake() {
	close(w.changed)
	w.changed = make(chan struct{})
}

// Send writes each of lines, a newline after each.
func (w *Wire) Send(lines ...string) {
	w.t.Helper()
	out := w.writer()
	for _, s := range lines {
		if _, err := io.WriteString(out, s+"\n"); err != nil {
			w.t.Fatalf("writing to the agent: %v", err)
		}
	}
}

// Until waits for ok to hold over every message the agent wrote so far,
// and returns them.
func (w *Wire) Until(what string, ok func([]Msg) bool) []Msg {
	w.t.Helper()
	timeout := time.After(Hung)
	for {
		w.mu.Lock()
		msgs, bad, eof, changed := append([]Msg(nil), w.msgs...), w.nonJSON, w.eof, w.changed
		w.mu.Unlock()
		if len(bad) > 0 {
			w.t.Fatalf("stdout carried a non-JSON line: %q", bad[0])
		}
		if ok(msgs) {
			return msgs
		}
		if eof {
			w.t.Fatalf("the agent closed stdout while waiting for %s", what)
		}
		select {
		case <-changed:
		case <-timeout:
			w.t.Fatalf("the agent hung waiting for %s", what)
		}
	}
}

// Msgs are the messages the agent wrote so far.
func (w *Wire) Msgs() []Msg {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Msg(nil), w.msgs...)
}

// Answers are the answers among msgs, by id (Msg.IDKey).
func Answers(msgs []Msg) map[string][]Msg {
	by := map[string][]Msg{}
	for _, m := range msgs {
		if m.IsAnswer() {
			by[m.IDKey()] = append(by[m.IDKey()], m)
		}
	}
	return by
}

// Wait returns the next answer with the given id (compact JSON: `1`,
// `"a"`, `null`) that Wait has not returned yet.
func (w *Wire) Wait(id string) Msg {
	w.t.Helper()
	n := w.taken[id]
	msgs := w.Until("an answer to id "+id, func(ms []Msg) bool { return len(Answers(ms)[id]) > n })
	w.taken[id]++
	return Answers(msgs)[id][n]
}

// Request is the line of a JSON-RPC request: id a string id (the answer
// is found by Wait with its JSON form, `"id"`), params marshalled.
func Request(id, method string, params any) string {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		panic(fmt.Sprintf("acptest: params of %s: %v", method, err))
	}
	return string(b)
}

// Call sends the request method with params under the string id and
// returns its answer.
func (w *Wire) Call(id, method string, params any) Msg {
	w.t.Helper()
	w.Send(Request(id, method, params))
	return w.Wait(strconv.Quote(id))
}

// Prompt sends text as a prompt of session sid under the string id and
// returns the answer; an error answer fails the test.
func (w *Wire) Prompt(id, sid, text string) Msg {
	w.t.Helper()
	m := w.Call(id, "session/prompt", map[string]any{"sessionId": sid, "prompt": []map[string]any{{"type": "text", "text": text}}})
	if m.Result == nil {
		w.t.Fatalf("prompt %s: %s", id, m.Line)
	}
	return m
}

// Handshake initializes, advertising no capability, and opens a session
// in cwd; it returns the session's id.
func (w *Wire) Handshake(cwd string) string {
	w.t.Helper()
	return w.HandshakeWith(cwd, `{}`)
}

// HandshakeWith is Handshake advertising the client capabilities caps (a
// JSON object).
func (w *Wire) HandshakeWith(cwd, caps string) string {
	w.t.Helper()
	w.Initialize(caps)
	m := w.Call("new", "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(m.Result, &res) != nil || res.SessionID == "" {
		w.t.Fatalf("session/new: %s", m.Line)
	}
	return res.SessionID
}

// Initialize sends initialize (id "init") advertising the client
// capabilities caps (a JSON object) and returns the answer; an error
// answer fails the test.
func (w *Wire) Initialize(caps string) Msg {
	w.t.Helper()
	m := w.Call("init", "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": json.RawMessage(caps)})
	if m.Result == nil {
		w.t.Fatalf("initialize: %s", m.Line)
	}
	return m
}

// Load loads session id in cwd (id "load"); an error answer fails the
// test.
func (w *Wire) Load(cwd, id string) {
	w.t.Helper()
	if m := w.Call("load", "session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}); m.Result == nil {
		w.t.Fatalf("session/load: %s", m.Line)
	}
}

// Lines is every JSON line the agent wrote so far, as one stream.
func (w *Wire) Lines() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for _, m := range w.msgs {
		b.WriteString(m.Line + "\n")
	}
	return b.String()
}

// CheckSchema validates every message the agent wrote so far against the
// schema ([CheckSchema]) and returns how many were checked.
func (w *Wire) CheckSchema() int {
	w.t.Helper()
	return CheckSchema(w.t, w.Sent.String(), w.Lines())
}

// Close ends the agent's input and waits for it to end, returning how.
func (w *Wire) Close() error {
	w.t.Helper()
	w.CloseInput()
	return w.WaitExit()
}

// Messages splits a recorded stream (Editor.Received, say) into its
// JSON-RPC messages, one a line; a line that is not JSON is reported.
func Messages(t testing.TB, stream string) []Msg {
	t.Helper()
	var out []Msg
	sc := bufio.NewScanner(strings.NewReader(stream))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m Msg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Errorf("not JSON on the wire: %q", sc.Text())
			continue
		}
		m.Line = sc.Text()
		out = append(out, m)
	}
	return out
}
