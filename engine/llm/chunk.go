package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// wireChunk is one streamed chunk (or a whole non-streamed completion) as
// the servers send it, with the fields openai-go does not know: the two
// reasoning fields, timings, prompt_progress, and the error shapes.
type wireChunk struct {
	Choices []struct {
		Index        int        `json:"index"`
		Delta        *wireDelta `json:"delta"`
		Message      *wireDelta `json:"message"`
		FinishReason *string    `json:"finish_reason"`
	} `json:"choices"`
	Usage          *wireUsage    `json:"usage"`
	Timings        *Timings      `json:"timings"`
	PromptProgress *wireProgress `json:"prompt_progress"`

	Error json.RawMessage `json:"error"`
	// vLLM's in-stream error: {"object":"error","message":…,"type":…,"code":…}
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

type wireDelta struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content"`
	Reasoning        string          `json:"reasoning"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
}

type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type wireProgress struct {
	Total     int     `json:"total"`
	Cache     int     `json:"cache"`
	Processed int     `json:"processed"`
	TimeMS    float64 `json:"time_ms"`
}

// wireError is the usual {"code","message","type"} error object; also
// llama.cpp's exceed_context_size_error numbers.
type wireError struct {
	Code          json.RawMessage `json:"code"`
	Message       string          `json:"message"`
	Type          string          `json:"type"`
	NPromptTokens int             `json:"n_prompt_tokens"`
	NCtx          int             `json:"n_ctx"`
}

// JSONText reads a JSON value as text: a string as itself, null as "",
// an array of content parts as their texts joined, and any other value as
// its JSON (arguments some servers send as an object). Servers and
// clients each write message content and arguments in any of these
// shapes, so mm and its fake model read them the one same way.
func JSONText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if raw[0] == '[' && json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return string(raw)
}

// codeText renders a JSON code (number or string) as text.
func codeText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// streamErrorFrom builds a StreamError from an error payload: an object
// {"error":{…}} or {"error":"text"}, a bare {"message":…}, or plain text.
func streamErrorFrom(payload []byte) *StreamError {
	se := &StreamError{Raw: string(bytes.TrimSpace(payload))}
	var c wireChunk
	if json.Unmarshal(payload, &c) != nil {
		se.Message = se.Raw
		return se
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		var we wireError
		if json.Unmarshal(c.Error, &we) == nil {
			se.Message, se.Type, se.Code = we.Message, we.Type, codeText(we.Code)
		} else {
			se.Message = JSONText(c.Error)
		}
	} else {
		se.Message, se.Type, se.Code = c.Message, c.Type, codeText(c.Code)
	}
	if se.Message == "" {
		se.Message = se.Raw
	}
	return se
}

// isError reports whether a decoded chunk is an error report.
func (c *wireChunk) isError() bool {
	return (len(c.Error) > 0 && string(c.Error) != "null") || c.Object == "error"
}

// assembler turns chunks into deltas and the final Response.
type assembler struct {
	resp      Response
	pos       map[int]int // tool-call index → position in resp.ToolCalls
	last      int         // index of the last tool call seen (for servers without index)
	content   strings.Builder
	reasoning strings.Builder
	args      []*strings.Builder
	finished  bool
	tokens    bool // a content, reasoning or tool-call delta was seen
}

func newAssembler() *assembler { return &assembler{pos: map[int]int{}, last: -1} }

// apply feeds one decoded chunk; emit receives the deltas in order:
// progress, reasoning, content, tool-call fragments. An error of emit
// stops it and is returned as is.
func (a *assembler) apply(c *wireChunk, emit func(Delta) error) error {
	if p := c.PromptProgress; p != nil {
		if err := emit(Delta{Progress: &Progress{Total: p.Total, Cache: p.Cache, Processed: p.Processed, TimeMS: p.TimeMS}}); err != nil {
			return err
		}
	}
	if u := c.Usage; u != nil {
		a.resp.Usage.PromptTokens, a.resp.Usage.CompletionTokens = u.PromptTokens, u.CompletionTokens
		if u.PromptTokensDetails != nil {
			a.resp.Usage.CachedTokens = u.PromptTokensDetails.CachedTokens
		}
		a.resp.HasUsage = true
	}
	if c.Timings != nil {
		t := *c.Timings
		a.resp.Timings = &t
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // n is always 1; another choice is not ours
		}
		d := ch.Delta
		if d == nil {
			d = ch.Message
		}
		if d != nil {
			if err := a.delta(d, emit); err != nil {
				return err
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.resp.FinishReason = *ch.FinishReason
			a.finished = true
		}
	}
	return nil
}

func (a *assembler) delta(d *wireDelta, emit func(Delta) error) error {
	// Some servers fill both reasoning fields with the same text; one is
	// enough.
	r := d.ReasoningContent
	if r == "" {
		r = d.Reasoning
	}
	if r != "" {
		a.tokens = true
		a.reasoning.WriteString(r)
		if err := emit(Delta{Reasoning: r}); err != nil {
			return err
		}
	}
	if s := JSONText(d.Content); s != "" {
		a.tokens = true
		a.content.WriteString(s)
		if err := emit(Delta{Content: s}); err != nil {
			return err
		}
	}
	for _, tc := range d.ToolCalls {
		a.tokens = true
		td := a.toolCall(tc)
		if td.ID == "" && td.Name == "" && td.Args == "" {
			continue
		}
		if err := emit(Delta{ToolCall: td}); err != nil {
			return err
		}
	}
	return nil
}

// toolCall merges one tool-call fragment. Fragments are matched by index;
// a server that sends no index gets one: a new id opens a new call, no id
// continues the last one.
func (a *assembler) toolCall(tc wireToolCall) *ToolCallDelta {
	idx := a.last
	switch {
	case tc.Index != nil:
		idx = *tc.Index
	case tc.ID != "" && (a.last < 0 || a.resp.ToolCalls[a.pos[a.last]].ID != tc.ID):
		idx = a.last + 1
		for _, ok := a.pos[idx]; ok; _, ok = a.pos[idx] {
			idx++
		}
	case idx < 0:
		idx = 0
	}
	a.last = idx
	p, ok := a.pos[idx]
	if !ok {
		p = len(a.resp.ToolCalls)
		a.pos[idx] = p
		a.resp.ToolCalls = append(a.resp.ToolCalls, ToolCall{})
		a.args = append(a.args, &strings.Builder{})
	}
	call := &a.resp.ToolCalls[p]
	td := &ToolCallDelta{Index: idx}
	if tc.ID != "" && call.ID == "" {
		call.ID, td.ID = tc.ID, tc.ID
	}
	if n := tc.Function.Name; n != "" && call.Name == "" {
		call.Name, td.Name = n, n
	}
	if args := JSONText(tc.Function.Arguments); args != "" {
		a.args[p].WriteString(args)
		td.Args = args
	}
	return td
}

// response finishes the assembled answer. Calls without an id get one,
// because the tool result must name the call it answers.
func (a *assembler) response() Response {
	r := a.resp
	r.Content = a.content.String()
	r.Reasoning = a.reasoning.String()
	r.ToolCalls = append([]ToolCall(nil), a.resp.ToolCalls...)
	for i := range r.ToolCalls {
		r.ToolCalls[i].Arguments = a.args[i].String()
		if r.ToolCalls[i].ID == "" {
			r.ToolCalls[i].ID = "call_" + strconv.Itoa(i)
		}
	}
	if !r.HasUsage && r.Timings != nil {
		// llama.cpp without include_usage still sends timings: the same
		// count, in its own words.
		r.Usage = Usage{
			PromptTokens:     r.Timings.PromptN + r.Timings.CacheN,
			CompletionTokens: r.Timings.PredictedN,
			CachedTokens:     r.Timings.CacheN,
		}
		r.HasUsage = true
	}
	if r.HasUsage && r.Usage.CachedTokens == 0 && r.Timings != nil {
		r.Usage.CachedTokens = r.Timings.CacheN
	}
	return r
}

func decodeChunk(data []byte) (*wireChunk, error) {
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("malformed chunk %s: %w", firstLine(string(data), 120), err)
	}
	return &c, nil
}
