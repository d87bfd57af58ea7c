package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mm-agent/mm/tools"
)

// tool is one MCP tool offered to the model.
type tool struct {
	c      *conn
	name   string // as the model sees it
	remote string // as the server knows it
	desc   string
	schema json.RawMessage
}

func newTool(c *conn, name string, t *sdk.Tool) *tool {
	return &tool{c: c, name: name, remote: t.Name, desc: trimDescription(t.Description, t.Title, c.opts.MaxDescription), schema: schemaOf(t.InputSchema)}
}

func (t *tool) Name() string            { return t.name }
func (t *tool) Description() string     { return t.desc }
func (t *tool) Schema() json.RawMessage { return t.schema }
func (t *tool) Kind() tools.Kind        { return tools.KindOther }

// Caps is everything: what a server's tool does is the server's to say,
// and its own annotations are not the user's word.
func (t *tool) Caps() tools.Caps { return tools.Anything }

func (t *tool) Describe(tools.Env, json.RawMessage) tools.Call {
	return tools.Call{Title: t.c.name + ": " + t.remote}
}

// Run asks permission, calls the tool within CallTimeout and returns its
// content as text. Every failure the server causes is a repair text and a
// ⚠ line; only a cancelled turn or a failed question is an error.
func (t *tool) Run(ctx context.Context, env tools.Env, args json.RawMessage) (tools.Result, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return tools.Errorf("[error: the arguments of %s must be one JSON object, as its schema says]", t.name), nil
	}
	if why := t.c.gone(); why != "" {
		return t.stopped(why), nil
	}
	d, err := env.Approve(ctx, tools.Approval{
		Tool: t.name, Kind: tools.KindOther, Caps: tools.Anything, Title: "Run " + t.c.name + ": " + t.remote,
		Key: t.name, Subject: string(args), Input: obj,
	})
	if err != nil {
		return tools.Result{}, err
	}
	if !d.Allowed {
		return tools.Errorf("[error: %s was not run: %s. Do not retry it; ask the user what they want instead]", t.name, d.Reason), nil
	}
	cctx, cancel := context.WithTimeout(ctx, t.c.opts.CallTimeout)
	defer cancel()
	res, err := t.c.cs.CallTool(cctx, &sdk.CallToolParams{Name: t.remote, Arguments: obj})
	switch {
	case ctx.Err() != nil:
		return tools.Result{}, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return tools.Result{
			Text:    fmt.Sprintf("[error: %s did not answer within %s — the MCP server %q may be stuck; do not call it again for this, carry on without it or tell the user]", t.name, t.c.opts.CallTimeout, t.c.name),
			IsError: true,
			Warning: fmt.Sprintf("MCP server %q did not answer %s within %s", t.c.name, t.remote, t.c.opts.CallTimeout),
		}, nil
	case err != nil:
		return t.failed(err), nil
	}
	return t.result(res), nil
}

// failed explains an error of the call: the server's own JSON-RPC error
// (bad arguments, unknown tool) is for the model to fix; a closed
// connection or an answer that is not a tool result is the server's fault.
func (t *tool) failed(err error) tools.Result {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return tools.Errorf("[error: %s refused the call: %s — check the arguments against its schema]", t.name, wire.Message)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
		// The stream ended: the watcher says why as soon as the SDK
		// has seen the connection close.
		timer := time.NewTimer(time.Second)
		defer timer.Stop()
		select {
		case <-t.c.done:
			return t.stopped(t.c.gone())
		case <-timer.C:
			return t.stopped(err.Error())
		}
	}
	return tools.Result{
		Text:    fmt.Sprintf("[error: the MCP server %q answered %s with something mm cannot read (%v) — do not call it again for this; carry on without it or tell the user]", t.c.name, t.remote, err),
		IsError: true,
		Warning: fmt.Sprintf("MCP server %q answered %s with a malformed result: %v", t.c.name, t.remote, err),
	}
}

// stopped is the answer of every call once the server is gone.
func (t *tool) stopped(why string) tools.Result {
	return tools.Result{
		Text:    fmt.Sprintf("[error: the MCP server %q stopped — %s and its other tools cannot be used in this session; carry on without them]", t.c.name, t.name),
		IsError: true,
		Warning: fmt.Sprintf("MCP server %q stopped (%s)", t.c.name, why),
	}
}

// result renders the content as text: text as is, other kinds as a line
// saying what they were.
func (t *tool) result(res *sdk.CallToolResult) tools.Result {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image (%s, %d bytes) — not shown: mm passes text only]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio (%s, %d bytes) — not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, "[resource: "+c.URI+"]")
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text))
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s (%s) — not shown]", c.Resource.URI, c.Resource.MIMEType))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" {
		text = "[" + t.name + " returned nothing]"
	}
	if max := t.c.opts.MaxOutput; len(text) > max {
		cut := max
		for cut > 0 && !isBoundary(text, cut) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[… %d more characters not shown]", len(text)-cut)
	}
	if res.IsError {
		return tools.Result{Text: "[error from " + t.name + "]\n" + text, IsError: true}
	}
	return tools.Result{Text: text}
}

func isBoundary(s string, i int) bool { return i >= len(s) || s[i]&0xC0 != 0x80 }

// toolName is <server>_<tool> in lower case, every run of characters
// outside [a-z0-9] turned into one "_", at most 64 characters (the limit
// of OpenAI-style tool names).
func toolName(server, name string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(server + "_" + name) {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			under = false
		} else if !under {
			b.WriteByte('_')
			under = true
		}
	}
	s := strings.Trim(b.String(), "_")
	if s == "" {
		s = "mcp"
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// unique appends _2, _3… to a name already taken.
func unique(name string, taken map[string]bool) string {
	n := name
	for i := 2; taken[n]; i++ {
		n = fmt.Sprintf("%s_%d", name, i)
	}
	taken[n] = true
	return n
}

// trimDescription keeps whole sentences, then whole words, within max
// characters; a tool without a description gets its title.
func trimDescription(desc, title string, max int) string {
	d := strings.Join(strings.Fields(desc), " ")
	if d == "" {
		d = strings.TrimSpace(title)
	}
	if len(d) <= max {
		return d
	}
	cut := d[:max]
	if i := strings.LastIndex(cut, ". "); i >= max/2 {
		return cut[:i+1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	for len(cut) > 0 && !isBoundary(d, len(cut)) {
		cut = cut[:len(cut)-1]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// schemaOf marshals the input schema with sorted keys (byte-stable);
// "$schema" is dropped, it only costs tokens.
func schemaOf(s any) json.RawMessage {
	b, err := json.Marshal(s)
	var m map[string]any
	if err != nil || json.Unmarshal(b, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	delete(m, "$schema")
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	b, _ = json.Marshal(m) // maps marshal with sorted keys
	return b
}
