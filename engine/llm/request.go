package llm

import (
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// build turns req into openai-go params plus the non-standard fields as
// WithJSONSet options.
//
// Tools are set as raw JSON rather than through openai-go's
// FunctionParameters, which is a Go map: marshalling it sorts the keys,
// and the order of a schema's properties (path first: small models follow the order they read) is part of what
// the model reads and of the stable prompt prefix.
func (c *Client) build(req Request, stream bool) (openai.ChatCompletionNewParams, []option.RequestOption) {
	p := openai.ChatCompletionNewParams{Model: req.Model}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, c.message(m))
	}
	s := req.Sampling
	if s.Temperature != nil {
		p.Temperature = openai.Float(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = openai.Float(*s.TopP)
	}
	if s.MaxTokens > 0 {
		// max_tokens, not max_completion_tokens: every local server reads
		// the former, not all of them the latter.
		p.MaxTokens = openai.Int(int64(s.MaxTokens))
	}
	// parallel_tool_calls without tools is an error for strict APIs.
	if s.ParallelToolCalls != nil && len(req.Tools) > 0 {
		p.ParallelToolCalls = openai.Bool(*s.ParallelToolCalls)
	}
	if s.PresencePenalty != nil {
		p.PresencePenalty = openai.Float(*s.PresencePenalty)
	}
	var opts []option.RequestOption
	if c.local() {
		if s.TopK != nil {
			opts = append(opts, option.WithJSONSet("top_k", *s.TopK))
		}
		if s.MinP != nil {
			opts = append(opts, option.WithJSONSet("min_p", *s.MinP))
		}
		if s.RepeatPenalty != nil {
			name := "repeat_penalty"
			if c.opts.Provider == ProviderVLLM {
				name = "repetition_penalty"
			}
			opts = append(opts, option.WithJSONSet(name, *s.RepeatPenalty))
		}
	}
	if stream {
		opts = append(opts,
			option.WithJSONSet("stream", true),
			// Some servers (DMR) send no usage at all otherwise.
			option.WithJSONSet("stream_options", map[string]any{"include_usage": true}),
		)
	}
	if len(req.Tools) > 0 {
		opts = append(opts, option.WithJSONSet("tools", toolsJSON(req.Tools)))
	}
	if req.ReasoningEffort != "" {
		opts = append(opts, option.WithJSONSet("reasoning_effort", req.ReasoningEffort))
	}
	if c.llamaCpp() {
		// Only llama.cpp (and DMR, which runs it) know these; a strict
		// remote API rejects unknown fields.
		if len(req.ChatTemplateKwargs) > 0 {
			opts = append(opts, option.WithJSONSet("chat_template_kwargs", req.ChatTemplateKwargs))
		}
		if req.ReturnProgress && stream {
			opts = append(opts, option.WithJSONSet("return_progress", true))
		}
	}
	return p, opts
}

// local reports whether the server is one of the local ones, which read
// top_k, min_p and a repeat penalty; a remote API may reject them.
func (c *Client) local() bool {
	switch c.opts.Provider {
	case ProviderLlamaCpp, ProviderDMR, ProviderOllama, ProviderLMStudio, ProviderVLLM:
		return true
	}
	return false
}

// llamaCpp reports whether the server is llama.cpp underneath.
func (c *Client) llamaCpp() bool {
	return c.opts.Provider == ProviderLlamaCpp || c.opts.Provider == ProviderDMR
}

// reasoningField is the name under which a server reads the reasoning of
// an assistant message sent back (gpt-oss needs it with tool calls).
func (c *Client) reasoningField() string {
	switch c.opts.Provider {
	case ProviderOllama, ProviderLMStudio:
		return "reasoning"
	}
	return "reasoning_content"
}

func (c *Client) message(m Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content)
	case RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID)
	case RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: tc.Name, Arguments: tc.Arguments,
					},
				},
			})
		}
		if m.Reasoning != "" {
			a.SetExtraFields(map[string]any{c.reasoningField(): m.Reasoning})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	default:
		return openai.UserMessage(m.Content)
	}
}

type toolJSON struct {
	Type     string       `json:"type"`
	Function functionJSON `json:"function"`
}

type functionJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

func toolsJSON(defs []ToolDef) json.RawMessage {
	out := make([]toolJSON, len(defs))
	for i, d := range defs {
		params := d.Parameters
		if len(params) == 0 || !json.Valid(params) {
			params = emptySchema
		}
		out[i] = toolJSON{Type: "function", Function: functionJSON{Name: d.Name, Description: d.Description, Parameters: params}}
	}
	b, _ := json.Marshal(out) // only valid RawMessages and strings: cannot fail
	return b
}
