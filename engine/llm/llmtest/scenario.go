package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// Scenario is one scripted conversation: the steps the "model" takes, in
// order, one step per request. It is usually read from a YAML file (see
// README.md for every key) but can be written in Go directly.
type Scenario struct {
	// Steps answer the requests in order of arrival.
	Steps []Step `yaml:"steps"`
	// Loop starts again at the first step when the last one was used,
	// instead of answering "scenario exhausted" (benchmarks, manual runs).
	Loop bool `yaml:"loop"`
	// NCtx is the context window reported by GET /props
	// (default_generation_settings.n_ctx). Zero means 8192.
	NCtx int `yaml:"n_ctx"`
	// Models lists the ids served by GET /v1/models. Empty means
	// ["fake-model"].
	Models []string `yaml:"models"`
	// ChatTemplate is the model's chat template as GET /props shows it
	// (chat_template); empty shows none.
	ChatTemplate string `yaml:"chat_template"`
	// Replies answer the requests whose last message contains their
	// When, before and without using the steps: the scripted model's
	// answer to a kind of question that may come at any point (a summary
	// request during a long session).
	Replies []Reply `yaml:"replies"`
	// Decisions answer POST /v1/systemone requests in order (a decision
	// model); none means the route does not exist (404).
	Decisions []DecisionAnswer `yaml:"decisions"`
}

// Reply is a step given to any request whose last message contains When.
type Reply struct {
	When string `yaml:"when"`
	Step Step   `yaml:"step"`
	// Times bounds how often it answers; 0 is every time.
	Times int `yaml:"times"`
}

// Step answers one request (or, with a failure that has Times > 0, the
// first Times requests fail and the next one gets the rest of the step).
//
// The generated stream is, in order: prompt_progress chunks (Progress),
// the role chunk, reasoning pieces, content pieces (Content then
// ContentRepeat), tool-call pieces, the finish_reason chunk, the usage
// chunk (only when the request asked for stream_options.include_usage),
// then "data: [DONE]". Raw replaces all of that.
type Step struct {
	// Reasoning is streamed first, in the delta field named by
	// ReasoningField.
	Reasoning string `yaml:"reasoning"`
	// ReasoningField is "reasoning_content" (llama.cpp, DMR, vLLM; the
	// default) or "reasoning" (Ollama, LM Studio).
	ReasoningField string `yaml:"reasoning_field"`
	// Content is streamed after the reasoning. <think> tags, text-written
	// tool calls and the like are just content.
	Content string `yaml:"content"`
	// ContentRepeat is appended to Content: a pattern repeated Times times
	// (a model that repeats itself).
	ContentRepeat *Repeat `yaml:"content_repeat"`
	// ToolCalls are streamed after the content, index 0, 1, ….
	ToolCalls []ToolCall `yaml:"tool_calls"`
	// FinishReason overrides the default ("tool_calls" when the step has
	// tool calls, else "stop"). "none" sends no finish_reason at all: the
	// stream ends with [DONE] but the answer is unfinished.
	FinishReason string `yaml:"finish_reason"`
	// NoDone leaves out the final "data: [DONE]" line (the body just ends).
	NoDone bool `yaml:"no_done"`

	// ChunkSize is how many bytes of text each content/reasoning/argument
	// chunk carries (never splitting a UTF-8 character). Zero splits after
	// each space, roughly one word per chunk as a server sends tokens.
	ChunkSize int `yaml:"chunk_size"`
	// SplitAt gives explicit byte offsets where Content is split
	// (overrides ChunkSize for the content).
	SplitAt []int `yaml:"split_at"`
	// Delay is waited before each chunk after the first.
	Delay time.Duration `yaml:"delay"`
	// Silence is waited before anything is sent, the response headers
	// included (a server reading a long prompt).
	Silence time.Duration `yaml:"silence"`
	// Pings writes an SSE comment line (": ping") before every chunk.
	Pings bool `yaml:"pings"`

	// Progress sends llama.cpp prompt_progress chunks (no choices) before
	// the first token.
	Progress *Progress `yaml:"progress"`
	// StallAfter, when set, sends that many chunks (0: only the headers),
	// then stops and waits until the client goes away or the test calls
	// Server.Release for this step, after which the rest is sent.
	StallAfter *int `yaml:"stall_after"`

	// Usage overrides the usage numbers; by default they are derived from
	// the request size (4 bytes a token) and the answer.
	Usage *Usage `yaml:"usage"`
	// Timings overrides llama.cpp's timings object; by default it is
	// derived like Usage.
	Timings *Timings `yaml:"timings"`
	// NoTimings leaves out the timings object (Ollama, vLLM, LM Studio).
	NoTimings bool `yaml:"no_timings"`

	// HTTPError answers with an HTTP error instead of a stream.
	HTTPError *HTTPError `yaml:"http_error"`
	// StreamError sends an error inside the stream after some chunks and
	// ends the body.
	StreamError *StreamError `yaml:"stream_error"`

	// Logprobs script the generated tokens and their candidates: a
	// non-streamed answer to a request with "logprobs": true carries them
	// as llama-server does (choices[0].logprobs.content). A step without
	// them is a server that returns none.
	Logprobs []TokenLogprob `yaml:"logprobs"`

	// Raw replaces the generated stream: each line is written as is,
	// followed by "\n" (write "" for the blank line that ends an SSE
	// event). Delay applies between lines.
	Raw []string `yaml:"raw"`
}

// Repeat is a pattern sent Times times: a runaway argument stream
// (the same text again and again), or a model repeating a sentence. Times 0 repeats until the client
// goes away.
type Repeat struct {
	Pattern string `yaml:"pattern"`
	Times   int    `yaml:"times"`
}

// ToolCall is one tool call of a step. Its arguments come from exactly one
// of Args (any JSON value; in YAML a mapping, key order kept), ArgsRaw (the
// text as is, possibly invalid or truncated) or ArgsRaw followed by
// ArgsRepeat (a runaway stream).
type ToolCall struct {
	// ID defaults to "call_<step>_<index>".
	ID   string `yaml:"id"`
	Name string `yaml:"name"`
	// Args is marshalled with encoding/json. From YAML it holds a
	// json.RawMessage built in the mapping's key order.
	Args any `yaml:"-"`
	// ArgsRaw is sent byte for byte.
	ArgsRaw string `yaml:"args_raw"`
	// ArgsRepeat is appended after ArgsRaw (or Args' text).
	ArgsRepeat *Repeat `yaml:"args_repeat"`
	// ChunkSize overrides the step's chunk size for these arguments;
	// 1 splits the arguments at every byte.
	ChunkSize int `yaml:"chunk_size"`
	// SplitAt gives explicit byte offsets where the arguments are split.
	SplitAt []int `yaml:"split_at"`
}

// Progress describes prompt_progress chunks: Chunks chunks (default 4)
// evenly spread over Total prompt tokens (default: derived from the
// request), Cache of them already cached, Delay between them.
type Progress struct {
	Total  int           `yaml:"total"`
	Cache  int           `yaml:"cache"`
	Chunks int           `yaml:"chunks"`
	Delay  time.Duration `yaml:"delay"`
}

// Usage is the OpenAI usage object; CachedTokens goes to
// prompt_tokens_details.cached_tokens.
type Usage struct {
	PromptTokens     int `yaml:"prompt_tokens" json:"prompt_tokens"`
	CompletionTokens int `yaml:"completion_tokens" json:"completion_tokens"`
	CachedTokens     int `yaml:"cached_tokens" json:"-"`
}

// Timings is llama.cpp's timings object.
type Timings struct {
	CacheN             int     `yaml:"cache_n" json:"cache_n"`
	PromptN            int     `yaml:"prompt_n" json:"prompt_n"`
	PromptMS           float64 `yaml:"prompt_ms" json:"prompt_ms"`
	PromptPerSecond    float64 `yaml:"prompt_per_second" json:"prompt_per_second"`
	PredictedN         int     `yaml:"predicted_n" json:"predicted_n"`
	PredictedMS        float64 `yaml:"predicted_ms" json:"predicted_ms"`
	PredictedPerSecond float64 `yaml:"predicted_per_second" json:"predicted_per_second"`
}

// HTTPError is an error answer: Status with Body (sent as is; JSON unless
// ContentType says otherwise). Times > 0 fails only the first Times
// requests that reach this step; the next one gets the rest of the step.
// Times 0 makes the error the step's whole answer.
type HTTPError struct {
	Status      int    `yaml:"status"`
	Body        string `yaml:"body"`
	ContentType string `yaml:"content_type"`
	Times       int    `yaml:"times"`
}

// StreamError is an error inside a 200 stream, sent after After chunks
// (the role chunk counts), after which the body ends.
//
// Styles: "data" (llama.cpp: data: {"error":{…}}), "event" (event: error
// then a data line), "error_line" (older llama.cpp: a line "error: {…}"),
// "bare" (Ollama: the JSON object alone on its line, no "data:"), "vllm"
// (data: {"object":"error","message":…}). Body, when set, replaces the
// generated JSON. Times works as for HTTPError.
type StreamError struct {
	After   int    `yaml:"after"`
	Style   string `yaml:"style"`
	Message string `yaml:"message"`
	Code    int    `yaml:"code"`
	Type    string `yaml:"type"`
	Body    string `yaml:"body"`
	Times   int    `yaml:"times"`
}

// Load reads a scenario file.
func Load(path string) (Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, fmt.Errorf("fakellm: %w", err)
	}
	sc, err := Parse(b)
	if err != nil {
		return Scenario{}, fmt.Errorf("fakellm: %s: %w", path, err)
	}
	return sc, nil
}

// ServeYAML serves the scenario written as yaml, as a scenario file holds
// it, until the test ends; a scenario that does not parse fails the test.
func ServeYAML(t testing.TB, yaml string) *Server {
	t.Helper()
	sc, err := Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("llmtest: %v", err)
	}
	s := NewServer(sc)
	t.Cleanup(s.Close)
	return s
}

// Parse reads a scenario from YAML. Unknown keys are errors (with their
// line), so that a typo in a scenario does not silently test nothing.
func Parse(b []byte) (Scenario, error) {
	var sc Scenario
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&sc); err != nil {
		if errors.Is(err, io.EOF) {
			return Scenario{}, errors.New("empty scenario")
		}
		return Scenario{}, err
	}
	if err := sc.validate(); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

func (sc Scenario) validate() error {
	for i, st := range sc.Steps {
		if err := st.validate(); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	for i, r := range sc.Replies {
		if r.When == "" {
			return fmt.Errorf("reply %d: no when", i+1)
		}
		if err := r.Step.validate(); err != nil {
			return fmt.Errorf("reply %d: %w", i+1, err)
		}
	}
	return nil
}

func (st Step) validate() error {
	switch st.ReasoningField {
	case "", "reasoning_content", "reasoning":
	default:
		return fmt.Errorf("reasoning_field %q: want reasoning_content or reasoning", st.ReasoningField)
	}
	if st.ChunkSize < 0 {
		return fmt.Errorf("chunk_size %d < 0", st.ChunkSize)
	}
	if e := st.HTTPError; e != nil && (e.Status < 100 || e.Status > 599) {
		return fmt.Errorf("http_error.status %d is not an HTTP status", e.Status)
	}
	if e := st.StreamError; e != nil {
		switch e.Style {
		case "", "data", "event", "error_line", "bare", "vllm":
		default:
			return fmt.Errorf("stream_error.style %q: want data, event, error_line, bare or vllm", e.Style)
		}
	}
	if err := st.validateLogprobs(); err != nil {
		return err
	}
	for j, tc := range st.ToolCalls {
		if tc.Name == "" {
			return fmt.Errorf("tool call %d has no name", j+1)
		}
		if tc.Args != nil && tc.ArgsRaw != "" {
			return fmt.Errorf("tool call %d (%s): args and args_raw are exclusive", j+1, tc.Name)
		}
	}
	return nil
}

// argsText is the complete argument text of the call, without the repeat.
func (tc ToolCall) argsText() (string, error) {
	if tc.Args == nil {
		return tc.ArgsRaw, nil
	}
	b, err := json.Marshal(tc.Args)
	if err != nil {
		return "", fmt.Errorf("tool call %s: args: %w", tc.Name, err)
	}
	return string(b), nil
}

// UnmarshalYAML reads a tool call, turning the args mapping into JSON in
// the mapping's own key order (a Go map would sort the keys, and the order
// of arguments is part of what a model writes).
func (tc *ToolCall) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a tool call is a mapping", n.Line)
	}
	known := map[string]bool{"id": true, "name": true, "args": true, "args_raw": true, "args_repeat": true, "chunk_size": true, "split_at": true}
	var args *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !known[k.Value] {
			return fmt.Errorf("line %d: unknown tool call key %q", k.Line, k.Value)
		}
		if k.Value == "args" {
			args = n.Content[i+1]
		}
	}
	type plain ToolCall
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*tc = ToolCall(p)
	if args != nil {
		var buf bytes.Buffer
		if err := nodeJSON(&buf, args); err != nil {
			return err
		}
		tc.Args = json.RawMessage(buf.Bytes())
	}
	return nil
}

// nodeJSON writes a YAML node as JSON, keeping mapping order.
func nodeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return nodeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return nodeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			buf.Write(k)
			buf.WriteByte(':')
			if err := nodeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := nodeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return scalarJSON(buf, n)
	default:
		return fmt.Errorf("line %d: unsupported YAML node in args", n.Line)
	}
	return nil
}

func scalarJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			return err
		}
		buf.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(b)
	default:
		b, _ := json.Marshal(n.Value)
		buf.Write(b)
	}
	return nil
}
