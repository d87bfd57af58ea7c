package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/mm-agent/mm/engine/llm"
)

// Recorded is one chat-completions request as the server received it.
type Recorded struct {
	// Body is the request body, byte for byte (for prefix-stability and
	// exact-field assertions).
	Body json.RawMessage
	// Header holds the request headers (Authorization, …).
	Header http.Header
	// Path is the request path, e.g. /v1/chat/completions.
	Path string
	// Step is the index in Scenario.Steps of the step that answered, or -1
	// when the scenario was exhausted or the prompt was refused.
	Step int
	// Reply is the index in Scenario.Replies that answered, when Step is
	// -1 and a reply matched.
	Reply int
	// Refused is set when the prompt did not fit the window (n_ctx) and
	// the server answered llama.cpp's 400 exceed_context_size_error.
	Refused bool
	// PromptTokens is the server's count of the prompt (body bytes / 4).
	PromptTokens int

	// Decoded from Body for easy assertions.
	Model        string
	Stream       bool
	IncludeUsage bool
	// ReturnProgress is llama.cpp's return_progress field: only then are
	// prompt_progress chunks sent.
	ReturnProgress bool
	// NProbs is how many candidates per generated token the request asked
	// for: llama-server reads "logprobs": true with "top_logprobs" (20
	// when absent) as n_probs; 0 when logprobs was not asked.
	NProbs   int
	Messages []Message
	Tools    []Tool
}

// Message is a decoded request message. Content parts (arrays) are joined.
type Message struct {
	Role             string
	Content          string
	ReasoningContent string // "reasoning_content" (llama.cpp style)
	Reasoning        string // "reasoning" (Ollama style)
	ToolCalls        []Call
	ToolCallID       string
}

// Call is a tool call of an assistant message in a request.
type Call struct {
	ID        string
	Name      string
	Arguments string
}

// Tool is a declared tool of a request.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Field decodes the top-level field key of the body into v, reporting
// whether it was present (reasoning_effort, chat_template_kwargs, …).
func (r Recorded) Field(key string, v any) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(r.Body, &m) != nil {
		return false
	}
	raw, ok := m[key]
	if !ok {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

// Last returns the last message of the request (the zero Message when
// there is none).
func (r Recorded) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

type wireRequest struct {
	Model          string `json:"model"`
	Stream         bool   `json:"stream"`
	ReturnProgress bool   `json:"return_progress"`
	Logprobs       bool   `json:"logprobs"`
	TopLogprobs    *int   `json:"top_logprobs"`
	StreamOptions  *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role             string          `json:"role"`
		Content          json.RawMessage `json:"content"`
		ReasoningContent string          `json:"reasoning_content"`
		Reasoning        string          `json:"reasoning"`
		ToolCallID       string          `json:"tool_call_id"`
		ToolCalls        []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// decodeRequest fills the decoded fields of rec from its body. A body
// that is not JSON leaves them empty; the server answers 400.
func decodeRequest(rec *Recorded) error {
	var w wireRequest
	if err := json.Unmarshal(rec.Body, &w); err != nil {
		return err
	}
	rec.Model = w.Model
	rec.Stream = w.Stream
	rec.ReturnProgress = w.ReturnProgress
	if w.Logprobs {
		rec.NProbs = 20
		if w.TopLogprobs != nil {
			rec.NProbs = *w.TopLogprobs
		}
	}
	rec.IncludeUsage = w.StreamOptions != nil && w.StreamOptions.IncludeUsage
	for _, m := range w.Messages {
		msg := Message{
			Role:             m.Role,
			Content:          llm.JSONText(m.Content),
			ReasoningContent: m.ReasoningContent,
			Reasoning:        m.Reasoning,
			ToolCallID:       m.ToolCallID,
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, Call{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range w.Tools {
		rec.Tools = append(rec.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return nil
}

// render lays a request out the way a chat template does — the tools
// (which templates put in the system part), then each message in order —
// so that cached_tokens counts the prefix a real KV cache would reuse:
// the JSON body puts "tools" after "messages", which a byte comparison of
// bodies would wrongly count as changed.
func render(rec *Recorded) []byte {
	var b strings.Builder
	for _, t := range rec.Tools {
		b.WriteString("<tool>" + t.Name + "\n" + t.Description + "\n" + string(t.Parameters) + "</tool>\n")
	}
	for _, m := range rec.Messages {
		b.WriteString("<|" + m.Role + "|>" + m.Content)
		for _, c := range m.ToolCalls {
			b.WriteString("<call>" + c.Name + " " + c.Arguments + "</call>")
		}
		b.WriteString("<|end|>\n")
	}
	return []byte(b.String())
}
