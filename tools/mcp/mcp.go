package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sourcegraph/conc"

	"github.com/mm-agent/mm/tools"
)

// Server is one MCP server to connect: a command (stdio) or a URL
// (streamable HTTP).
type Server struct {
	Name string
	// Command and Args start a stdio server; Env (NAME=value) is added to
	// Options.Env for it.
	Command string
	Args    []string
	Env     []string
	// URL is an HTTP server's endpoint; Headers are sent with every request.
	URL     string
	Headers map[string]string
}

// Options configure Connect. Zero values are documented per field.
type Options struct {
	Servers []Server
	// Env is the environment a stdio server starts with (the composition
	// root passes mm's). Nil: an empty environment plus Server.Env.
	Env []string
	// Dir is the working directory of stdio servers. Empty: mm's.
	Dir string
	// StartTimeout bounds starting one server and listing its tools.
	// Zero: 10 s.
	StartTimeout time.Duration
	// CallTimeout bounds one tool call. Zero: 60 s.
	CallTimeout time.Duration
	// MaxDescription bounds each tool's description, in characters.
	// Zero: 200.
	MaxDescription int
	// MaxOutput bounds a call's result text, in characters. Zero: 16,000.
	MaxOutput int
	// Logger receives the servers' stderr and protocol events at debug
	// level. Nil: discard.
	Logger *slog.Logger
	// Version is mm's version, sent as the client's.
	Version string
	// Reserved are tool names already taken (mm's own tools); an MCP
	// tool that would get one is suffixed instead.
	Reserved []string
}

func (o *Options) defaults() {
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 60 * time.Second
	}
	if o.MaxDescription <= 0 {
		o.MaxDescription = 200
	}
	if o.MaxOutput <= 0 {
		o.MaxOutput = 16000
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Set is the connected servers of a session and their tools.
type Set struct {
	// Notes are the lines to show the user: one per server that failed.
	Notes []string

	tools []tools.Tool
	conns []*conn
	wg    *conc.WaitGroup // one watcher per connection, joined by Close
}

// Tools returns the servers' tools, in server order then the server's.
func (s *Set) Tools() []tools.Tool {
	if s == nil {
		return nil
	}
	return s.tools
}

// conn is one connected server.
type conn struct {
	name string
	opts *Options
	cs   *sdk.ClientSession
	cmd  *exec.Cmd // nil for HTTP
	// done is closed when the connection ended (the server exited or
	// closed the stream); why says how.
	done chan struct{}
	mu   sync.Mutex
	why  string
	errs *tailBuffer // the server's last stderr lines
}

// Connect starts every server in parallel and lists their tools. It never
// fails: a server that cannot serve is a note, and its tools are absent.
func Connect(ctx context.Context, opts Options) *Set {
	opts.defaults()
	type outcome struct {
		c     *conn
		tools []*sdk.Tool
		note  string
	}
	out := make([]outcome, len(opts.Servers))
	var wg conc.WaitGroup
	for i, srv := range opts.Servers {
		wg.Go(func() {
			c, ts, err := connect(ctx, &opts, srv)
			if err != nil {
				out[i].note = fmt.Sprintf("MCP server %q is off: %v", srv.Name, err)
				opts.Logger.Warn("MCP server failed", "server", srv.Name, "err", err)
				return
			}
			out[i] = outcome{c: c, tools: ts}
		})
	}
	wg.Wait()
	set := &Set{wg: conc.NewWaitGroup()}
	names := map[string]bool{}
	for _, n := range opts.Reserved {
		names[n] = true
	}
	for _, o := range out {
		if o.note != "" {
			set.Notes = append(set.Notes, o.note)
			continue
		}
		set.conns = append(set.conns, o.c)
		c := o.c
		set.wg.Go(func() { c.watch() })
		for _, t := range o.tools {
			name := unique(toolName(c.name, t.Name), names)
			set.tools = append(set.tools, newTool(c, name, t))
		}
	}
	return set
}

// Close ends every server, in parallel: the session is closed (stdin
// first, as the protocol asks), then the process group is killed.
func (s *Set) Close() {
	if s == nil {
		return
	}
	var wg conc.WaitGroup
	for _, c := range s.conns {
		wg.Go(c.close)
	}
	wg.Wait()
	if s.wg != nil {
		s.wg.Wait()
	}
}

func connect(ctx context.Context, opts *Options, srv Server) (*conn, []*sdk.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	c := &conn{name: srv.Name, opts: opts, done: make(chan struct{}), errs: &tailBuffer{}}
	var transport sdk.Transport
	switch {
	case srv.Command != "":
		cmd := exec.Command(srv.Command, srv.Args...)
		cmd.Env = append(append([]string{}, opts.Env...), srv.Env...)
		cmd.Dir = opts.Dir
		cmd.Stderr = io.MultiWriter(c.errs, logWriter{opts.Logger, srv.Name})
		detach(cmd)
		c.cmd = cmd
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}
	case srv.URL != "":
		transport = &sdk.StreamableClientTransport{
			Endpoint:             srv.URL,
			HTTPClient:           &http.Client{Transport: headers{srv.Headers}},
			MaxRetries:           1,
			DisableStandaloneSSE: true,
		}
	default:
		return nil, nil, errors.New("it has neither a command nor a url")
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "mm", Version: opts.Version}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		c.kill()
		return nil, nil, c.explain("could not start", ctx, err)
	}
	c.cs = cs
	var ts []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			c.close()
			return nil, nil, c.explain("could not list its tools", ctx, err)
		}
		ts = append(ts, t)
	}
	opts.Logger.Info("MCP server connected", "server", srv.Name, "tools", len(ts))
	return c, ts, nil
}

// explain words a start failure in one line, with the server's last
// stderr line when it said something.
func (c *conn) explain(what string, ctx context.Context, err error) error {
	msg := fmt.Sprintf("%s: %v", what, err)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("%s within %s", what, c.opts.StartTimeout)
	case errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed):
		msg = what + ": it closed the connection"
		if c.cmd != nil {
			msg = what + ": it exited"
		}
	}
	if last := c.errs.last(); last != "" {
		msg += " (it said: " + last + ")"
	}
	return errors.New(msg)
}

// watch waits for the connection to end and records why.
func (c *conn) watch() {
	err := c.cs.Wait()
	c.mu.Lock()
	c.why = "the connection ended"
	if err != nil {
		c.why = err.Error()
	}
	if last := c.errs.last(); last != "" {
		c.why += "; it said: " + last
	}
	c.mu.Unlock()
	close(c.done)
}

// gone says why the server is gone, or "" while it serves.
func (c *conn) gone() string {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.why
	default:
		return ""
	}
}

func (c *conn) close() {
	if c.cs != nil {
		_ = c.cs.Close()
	}
	c.kill()
}

func (c *conn) kill() {
	if c.cmd != nil {
		killGroup(c.cmd)
	}
}

// headers adds the configured headers to every request.
type headers struct{ h map[string]string }

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.h {
			r.Header.Set(k, v)
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// logWriter sends a server's stderr to the log, line by line.
type logWriter struct {
	log  *slog.Logger
	name string
}

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.log.Debug("MCP server stderr", "server", w.name, "line", line)
	}
	return len(p), nil
}

// tailBuffer keeps the last 4 KiB a server wrote on stderr.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

// last is the last non-empty line, cut to 200 characters.
func (t *tailBuffer) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	s := strings.TrimSpace(string(lines[len(lines)-1]))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
