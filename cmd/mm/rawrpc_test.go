package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
)

// rawAgent is a running `mm acp` spoken to in raw JSON-RPC lines, for the
// messages an SDK client would never send. Every line mm writes is kept.
type rawAgent struct {
	t      *testing.T
	cmd    *exec.Cmd // the process; nil when served in process
	stdin  io.WriteCloser
	stderr *recorder
	sent   *recorder // every line sent to mm
	exited chan error
	// readDone is closed once stdout reached EOF and exited has mm's end.
	readDone chan struct{}

	mu      sync.Mutex
	out     []rawMsg
	nonJSON []string
	closed  bool          // stdout reached EOF
	changed chan struct{} // closed and replaced at each line

	consumed map[string]int // answers wait returned, by id (test goroutine only)
}

// rawMsg is one line mm wrote.
type rawMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Line string `json:"-"`
}

// answer reports whether m answers a request (not a request or a
// notification of mm's own).
func (m rawMsg) answer() bool { return m.Method == "" }

// idKey is the compact text of m's id ("null" for none).
func (m rawMsg) idKey() string {
	var b bytes.Buffer
	if len(m.ID) == 0 || json.Compact(&b, m.ID) != nil {
		return "null"
	}
	return b.String()
}

// startRaw serves `mm acp` in this process (as startAgent does) and
// speaks raw JSON-RPC lines to it; MM_TEST_BINARY=1 runs the binary.
func startRaw(t *testing.T, dir string, env []string) *rawAgent {
	t.Helper()
	if os.Getenv("MM_TEST_BINARY") == "1" {
		return startRawProcess(t, dir, env)
	}
	inR, inW := io.Pipe()   // test → mm
	outR, outW := io.Pipe() // mm → test
	r := newRawAgent(t)
	r.stdin = inW
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		err := serve(ctx, environment{vars: config.Env(env), dir: dir}, inR, outW, r.stderr)
		outW.Close()
		inR.Close()
		ended <- err
	}()
	t.Cleanup(func() {
		// As the process variant's SIGKILL: the test is over, mm stops now.
		cancel()
		inW.Close()
		select {
		case <-r.readDone:
		case <-time.After(10 * time.Second):
			t.Errorf("mm did not return within 10 s of its context ending")
		}
		if t.Failed() {
			t.Logf("mm stderr:\n%s", r.stderr.String())
		}
	})
	go r.read(outR, func() error { return <-ended })
	return r
}

// startRawProcess is startRaw with the real binary: for what only a
// process shows. Each of also changes the command before it starts.
func startRawProcess(t *testing.T, dir string, env []string, also ...func(*exec.Cmd)) *rawAgent {
	t.Helper()
	cmd := exec.Command(mmBin(t), "acp")
	cmd.Dir = dir
	cmd.Env = env
	r := newRawAgent(t)
	r.cmd = cmd
	cmd.Stderr = r.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	for _, f := range also {
		f(cmd)
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.stdin = stdin
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("mm stderr:\n%s", r.stderr.String())
		}
	})
	go r.read(stdout, cmd.Wait)
	return r
}

func newRawAgent(t *testing.T) *rawAgent {
	return &rawAgent{t: t, stderr: &recorder{}, sent: &recorder{}, exited: make(chan error, 1), readDone: make(chan struct{}), changed: make(chan struct{}), consumed: map[string]int{}}
}

// read keeps every line mm writes until EOF, then how mm ended (wait).
func (r *rawAgent) read(stdout io.Reader, wait func() error) {
	defer close(r.readDone)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m rawMsg
		err := json.Unmarshal(sc.Bytes(), &m)
		m.Line = sc.Text()
		r.mu.Lock()
		if err != nil {
			r.nonJSON = append(r.nonJSON, m.Line)
		} else {
			r.out = append(r.out, m)
		}
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.closed = true
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	r.exited <- wait()
}

func (r *rawAgent) send(lines ...string) {
	r.t.Helper()
	for _, s := range lines {
		if _, err := io.WriteString(r.stdin, s+"\n"); err != nil {
			r.t.Fatal(err)
		}
		r.sent.Write([]byte(s + "\n"))
	}
}

// until waits for ok to hold over every line mm wrote so far.
func (r *rawAgent) until(what string, ok func([]rawMsg) bool) []rawMsg {
	r.t.Helper()
	timeout := time.After(hung)
	for {
		r.mu.Lock()
		out, bad, closed, changed := append([]rawMsg(nil), r.out...), r.nonJSON, r.closed, r.changed
		r.mu.Unlock()
		if len(bad) > 0 {
			r.t.Fatalf("stdout carried a non-JSON line: %q", bad[0])
		}
		if ok(out) {
			return out
		}
		if closed {
			r.t.Fatalf("mm closed stdout while waiting for %s", what)
		}
		select {
		case <-changed:
		case <-timeout:
			r.t.Fatalf("mm hung waiting for %s", what)
		}
	}
}

// answers are the answers to requests written so far, by id.
func answers(out []rawMsg) map[string][]rawMsg {
	by := map[string][]rawMsg{}
	for _, m := range out {
		if m.answer() {
			by[m.idKey()] = append(by[m.idKey()], m)
		}
	}
	return by
}

// wait returns the next answer with the given id (compact JSON: `1`,
// `"a"`, `null`) that wait has not returned yet.
func (r *rawAgent) wait(id string) rawMsg {
	r.t.Helper()
	n := r.consumed[id]
	out := r.until("an answer to id "+id, func(out []rawMsg) bool { return len(answers(out)[id]) > n })
	r.consumed[id]++
	return answers(out)[id][n]
}

// handshake initializes and opens a session in dir, returning its id.
func (r *rawAgent) handshake(dir string) string {
	r.t.Helper()
	return r.handshakeWith(dir, `{}`)
}

// handshakeWith is handshake advertising the client capabilities caps
// (a JSON object).
func (r *rawAgent) handshakeWith(dir, caps string) string {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientCapabilities":` + caps + `}}`)
	if m := r.wait(`"init"`); m.Result == nil {
		r.t.Fatalf("initialize: %s", m.Line)
	}
	b, _ := json.Marshal(dir)
	r.send(`{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":` + string(b) + `,"mcpServers":[]}}`)
	m := r.wait(`"new"`)
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(m.Result, &res) != nil || res.SessionID == "" {
		r.t.Fatalf("session/new: %s", m.Line)
	}
	return res.SessionID
}

// lines is every line mm wrote so far, as one stream.
func (r *rawAgent) lines() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for _, m := range r.out {
		b.WriteString(m.Line + "\n")
	}
	return b.String()
}

// close ends stdin and waits for mm to exit.
func (r *rawAgent) close() error {
	r.t.Helper()
	r.stdin.Close()
	select {
	case err := <-r.exited:
		return err
	case <-time.After(hung):
		r.t.Fatal("mm did not exit after EOF on stdin")
		return nil
	}
}
