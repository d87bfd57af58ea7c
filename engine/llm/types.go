package llm

import "encoding/json"

// Role of a chat message.
type Role string

// The roles of the OpenAI chat API.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one chat message, as stored in history and sent to the server.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// Reasoning is sent back only for profiles that need it (gpt-oss);
	// otherwise it never enters history.
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// ToolCall is a complete tool call of an assistant message.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // raw JSON text, possibly invalid
}

// ToolDef declares a tool to the model.
type ToolDef struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Sampling parameters; nil pointers are not sent.
type Sampling struct {
	Temperature       *float64
	TopP              *float64
	MaxTokens         int
	ParallelToolCalls *bool
	// PresencePenalty is standard OpenAI.
	PresencePenalty *float64
	// TopK, MinP and RepeatPenalty are local servers' extensions (llama.cpp,
	// vLLM, Ollama, LM Studio); never sent to the OpenAI API, which
	// rejects them.
	TopK          *int
	MinP          *float64
	RepeatPenalty *float64
}

// Request is one chat completion request.
type Request struct {
	Model    string
	Messages []Message
	Tools    []ToolDef // in the order given (the engine sorts them)
	Sampling Sampling
	// ReasoningEffort is sent as reasoning_effort when not empty.
	ReasoningEffort string
	// ChatTemplateKwargs is sent only to llama.cpp and DMR.
	ChatTemplateKwargs map[string]any
	// ReturnProgress asks llama.cpp for prompt_progress chunks.
	ReturnProgress bool
	// WatchdogScale multiplies both watchdog timeouts for this call; 0 or
	// 1 keeps them. A summary call reads a long transcript and writes a
	// long answer: it gets 2.
	WatchdogScale float64
}

// Delta is one piece of a streamed answer, delivered in order.
// Exactly one of its fields is set.
type Delta struct {
	Content   string
	Reasoning string
	ToolCall  *ToolCallDelta
	Progress  *Progress
}

// ToolCallDelta is a fragment of a tool call; fragments with the same
// Index belong to the same call. ID and Name arrive once, Args in pieces.
type ToolCallDelta struct {
	Index int
	ID    string
	Name  string
	Args  string
}

// Progress is llama.cpp's prompt_progress: how much of the prompt was read.
type Progress struct {
	Total, Cache, Processed int
	TimeMS                  float64
}

// Usage is the server's count for one call.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int // usage.prompt_tokens_details.cached_tokens or timings.cache_n
}

// Timings is llama.cpp's timings object, when the server sent one.
type Timings struct {
	CacheN             int     `json:"cache_n"`
	PromptN            int     `json:"prompt_n"`
	PromptMS           float64 `json:"prompt_ms"`
	PredictedN         int     `json:"predicted_n"`
	PredictedMS        float64 `json:"predicted_ms"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

// Response is a complete answer, assembled from the deltas.
type Response struct {
	Content      string
	Reasoning    string
	ToolCalls    []ToolCall
	FinishReason string // "stop", "length", "tool_calls"
	Usage        Usage
	HasUsage     bool
	Timings      *Timings
}
