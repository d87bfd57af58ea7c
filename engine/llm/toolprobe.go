package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// ProbeTool is the one tool of the tool-call probe: a name no model says by
// chance, so that the name in the answer's text means a call written as
// text.
const ProbeTool = "mm_doctor_echo"

// ToolProbe is what one tool-call round trip showed (mm doctor): a
// tiny request offering one tool and asking for it, then, when the model
// called it, the result sent back for an answer. A server that cannot
// call tools (llama-server without --jinja, a template without tools)
// fails here in seconds instead of in the user's first turn.
type ToolProbe struct {
	// Called: the model made a real tool call to ProbeTool; Args are its
	// arguments.
	Called bool
	Args   string
	// AsText: the answer's text names the tool instead (a call written
	// as text: the server does not apply the tool-call template).
	AsText bool
	// Text is the start of the answer's text when there was no call;
	// Content is all of it, for reading the syntax of a call written as
	// text.
	Text, Content string
	// Reasoning: reasoning arrived in the reasoning field; ThinkTags: as
	// <think> tags inside the content instead.
	Reasoning, ThinkTags bool
	// Err is the failure of the first request (tools rejected, no model…);
	// AnswerErr the failure of the request that carries the tool result.
	Err, AnswerErr error
	// Elapsed is the whole round trip.
	Elapsed time.Duration
}

// ProbeTools plays the round trip with model (required) and says what it
// saw; it never returns a Go error of its own: failures are in the fields.
func (c *Client) ProbeTools(ctx context.Context, model string) ToolProbe {
	start := time.Now()
	var p ToolProbe
	schema := json.RawMessage(`{"type":"object","properties":{"word":{"type":"string","description":"the word to echo"}},"required":["word"]}`)
	maxTokens := 1024 // room for a thinking model's reasoning before the call
	temp := 0.0
	req := Request{
		Model: model,
		Messages: []Message{
			{Role: RoleSystem, Content: "You are a test harness. Use the tool you are given."},
			{Role: RoleUser, Content: "Call the " + ProbeTool + " tool with the word \"ready\"."},
		},
		Tools:    []ToolDef{{Name: ProbeTool, Description: "Echoes a word back.", Parameters: schema}},
		Sampling: Sampling{Temperature: &temp, MaxTokens: maxTokens},
	}
	resp, err := c.Stream(ctx, req, func(d Delta) error {
		p.Reasoning = p.Reasoning || d.Reasoning != ""
		return nil
	})
	p.ThinkTags = strings.Contains(resp.Content, "<think>")
	if err != nil {
		p.Err, p.Elapsed = err, time.Since(start)
		return p
	}
	var call *ToolCall
	for i := range resp.ToolCalls {
		if resp.ToolCalls[i].Name == ProbeTool {
			call = &resp.ToolCalls[i]
			break
		}
	}
	if call == nil {
		p.AsText = strings.Contains(resp.Content, ProbeTool)
		p.Text = firstLine(strings.TrimSpace(resp.Content), 120)
		p.Content = resp.Content
		p.Elapsed = time.Since(start)
		return p
	}
	p.Called, p.Args = true, call.Arguments
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{*call}},
		Message{Role: RoleTool, ToolCallID: call.ID, Content: "ready"},
	)
	if _, err := c.Stream(ctx, req, func(Delta) error { return nil }); err != nil && !errors.Is(err, context.Canceled) {
		p.AnswerErr = err
	}
	p.Elapsed = time.Since(start)
	return p
}
