package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"
)

// post sends the chat request through openai-go and returns the raw
// response with its body unread (openai-go's ssestream cannot read what
// the servers send; see sseReader). An HTTP error comes back as
// *APIError, built from the body by apiError rather than by openai-go,
// which fails on Ollama's {"error":"text"} and on non-JSON bodies.
func (c *Client) post(ctx context.Context, req Request, stream bool) (*http.Response, error) {
	params, opts := c.build(req, stream)
	var raw, body *http.Response
	opts = append(opts, option.WithResponseInto(&raw))
	err := c.oa.Post(ctx, "chat/completions", params, &body, opts...)
	if raw != nil && raw.StatusCode >= 400 {
		// openai-go has read the body and put it back for us.
		defer raw.Body.Close()
		return nil, c.apiError(ctx, raw, req.Model)
	}
	if err != nil {
		return nil, err
	}
	return body, nil
}

// apiError builds an *APIError from an error answer of any server:
// {"error":{"code","message","type",…}} (OpenAI, llama.cpp, LM Studio),
// {"error":"text"} (Ollama), {"object":"error","message":…} (vLLM),
// {"detail":…} (FastAPI servers), or plain text.
func (c *Client) apiError(ctx context.Context, resp *http.Response, model string) *APIError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	e := parseAPIError(resp.StatusCode, c.masked(body))
	e.Model = model
	if e.Status == http.StatusNotFound && modelNotFound(e) {
		// Explain names the served models; ask now, while we can, briefly.
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		e.Served, _ = c.Models(lctx)
	}
	return e
}

func parseAPIError(status int, body []byte) *APIError {
	e := &APIError{Status: status}
	body = bytes.TrimSpace(body)
	var w struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &w) != nil {
		e.Message = string(body)
		if e.Message == "" {
			e.Message = http.StatusText(status)
		}
		overflowNumbers(e)
		return e
	}
	var we wireError
	switch {
	case len(w.Error) > 0 && w.Error[0] == '{' && json.Unmarshal(w.Error, &we) == nil:
		e.Message, e.Type, e.Code = we.Message, we.Type, codeText(we.Code)
		e.NPromptTokens, e.NCtx = we.NPromptTokens, we.NCtx
	case len(w.Error) > 0:
		e.Message = JSONText(w.Error)
	case w.Message != "":
		e.Message, e.Type, e.Code = w.Message, w.Type, codeText(w.Code)
	case len(w.Detail) > 0:
		e.Message = JSONText(w.Detail)
	default:
		e.Message = string(body)
	}
	overflowNumbers(e)
	return e
}

// getJSON GETs url and decodes its JSON answer into out.
func (c *Client) getJSON(ctx context.Context, url string, out any) error {
	return c.doJSON(ctx, http.MethodGet, url, nil, out)
}

func (c *Client) doJSON(ctx context.Context, method, url string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("llm: %s %s: %w", method, url, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return fmt.Errorf("llm: %s %s: %w", method, url, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return &transportError{err}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return parseAPIError(resp.StatusCode, c.masked(b))
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return &transportError{err}
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("llm: %s %s: not the expected JSON: %s", method, url, firstLine(strings.TrimSpace(string(c.masked(b))), 120))
	}
	return nil
}

// masked replaces the API key in what the server sent back: a server that
// echoes the key in an error must not put it into an event, a note, the
// editor's error or the session file, which all start from these bytes.
func (c *Client) masked(b []byte) []byte {
	if k := c.opts.APIKey; len(k) >= 4 {
		return bytes.ReplaceAll(b, []byte(k), []byte("[redacted]"))
	}
	return b
}
