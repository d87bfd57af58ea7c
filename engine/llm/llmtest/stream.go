package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"unicode/utf8"
)

// created is the fixed "created" timestamp of every chunk: answers are
// deterministic, so golden files stay stable.
const created = 1700000000

// answer is everything needed to render one step for one request.
type answer struct {
	step         Step
	stepIndex    int
	id           string // chatcmpl-…
	model        string
	includeUsage bool
	// returnProgress: the request asked for prompt_progress (llama.cpp
	// sends none otherwise).
	returnProgress bool
	promptTokens   int
	cachedTokens   int
	withError      bool // send the step's StreamError
	// nProbs: the request asked for logprobs, with this many candidates.
	nProbs int
}

// chunk is one chat.completion.chunk as llama-server writes it.
type chunk struct {
	Choices           []choice      `json:"choices"`
	Created           int64         `json:"created"`
	ID                string        `json:"id"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Object            string        `json:"object"`
	Usage             *usageJSON    `json:"usage,omitempty"`
	Timings           *Timings      `json:"timings,omitempty"`
	PromptProgress    *progressJSON `json:"prompt_progress,omitempty"`
}

type choice struct {
	FinishReason *string         `json:"finish_reason"`
	Index        int             `json:"index"`
	Delta        json.RawMessage `json:"delta"`
}

type usageJSON struct {
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokens        int `json:"prompt_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type progressJSON struct {
	Total     int     `json:"total"`
	Cache     int     `json:"cache"`
	Processed int     `json:"processed"`
	TimeMS    float64 `json:"time_ms"`
}

// frame is one unit the writer sends: an SSE data event, or raw text
// written as is (error styles, raw steps).
type frame struct {
	data []byte // "data: <data>\n\n"
	raw  string // written as is
	// progress frames wait Progress.Delay instead of Step.Delay.
	progress bool
}

func (a *answer) chunk(choices []choice) *chunk {
	if choices == nil {
		choices = []choice{}
	}
	return &chunk{Choices: choices, Created: created, ID: a.id, Model: a.model, SystemFingerprint: "fakellm", Object: "chat.completion.chunk"}
}

// mustJSON marshals without HTML escaping, as llama-server writes: a
// "<think>" in content stays "<think>" on the wire.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("fakellm: marshal %T: %v", v, err)) // only our own types: a bug
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func deltaFrame(a *answer, delta any) frame {
	return frame{data: mustJSON(a.chunk([]choice{{Index: 0, Delta: mustJSON(delta)}}))}
}

// frames renders the step as a sequence of frames, lazily so that an
// endless repeat costs nothing up front.
func (a *answer) frames() iter.Seq[frame] {
	st := a.step
	return func(yield func(frame) bool) {
		if len(st.Raw) > 0 {
			for _, l := range st.Raw {
				if !yield(frame{raw: l + "\n"}) {
					return
				}
			}
			return
		}
		n := 0 // frames sent, for StreamError.After
		emit := func(f frame) bool {
			if a.withError && n == a.step.StreamError.After {
				yield(a.errorFrame())
				return false
			}
			n++
			return yield(f)
		}
		outBytes := 0
		if p := st.Progress; p != nil && a.returnProgress {
			total := p.Total
			if total == 0 {
				total = a.promptTokens
			}
			k := p.Chunks
			if k <= 0 {
				k = 4
			}
			for i := 1; i <= k; i++ {
				pj := &progressJSON{Total: total, Cache: p.Cache, Processed: p.Cache + (total-p.Cache)*i/k, TimeMS: float64(i) * 10}
				c := a.chunk(nil)
				c.PromptProgress = pj
				if !emit(frame{data: mustJSON(c), progress: true}) {
					return
				}
			}
		}
		if !emit(deltaFrame(a, json.RawMessage(`{"role":"assistant","content":null}`))) {
			return
		}
		field := st.ReasoningField
		if field == "" {
			field = "reasoning_content"
		}
		for piece := range pieces(st.Reasoning, st.ChunkSize, nil) {
			outBytes += len(piece)
			if !emit(deltaFrame(a, map[string]string{field: piece})) {
				return
			}
		}
		for piece := range pieces(st.Content, st.ChunkSize, st.SplitAt) {
			outBytes += len(piece)
			if !emit(deltaFrame(a, map[string]string{"content": piece})) {
				return
			}
		}
		for piece := range repeated(st.ContentRepeat, st.ChunkSize) {
			outBytes += len(piece)
			if !emit(deltaFrame(a, map[string]string{"content": piece})) {
				return
			}
		}
		for i, tc := range st.ToolCalls {
			head := map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "id": a.callID(i, tc), "type": "function",
				"function": map[string]string{"name": tc.Name, "arguments": ""},
			}}}
			if !emit(deltaFrame(a, head)) {
				return
			}
			args, err := tc.argsText()
			if err != nil {
				args = err.Error()
			}
			size := tc.ChunkSize
			if size == 0 {
				size = st.ChunkSize
			}
			argFrame := func(p string) frame {
				return deltaFrame(a, map[string]any{"tool_calls": []any{map[string]any{
					"index": i, "function": map[string]string{"arguments": p},
				}}})
			}
			for piece := range pieces(args, size, tc.SplitAt) {
				outBytes += len(piece)
				if !emit(argFrame(piece)) {
					return
				}
			}
			for piece := range repeated(tc.ArgsRepeat, size) {
				outBytes += len(piece)
				if !emit(argFrame(piece)) {
					return
				}
			}
		}
		timings := a.timings(outBytes)
		if fr := a.finishReason(); fr != "" {
			c := a.chunk([]choice{{FinishReason: &fr, Index: 0, Delta: json.RawMessage(`{}`)}})
			if !a.includeUsage {
				c.Timings = timings
			}
			if !emit(frame{data: mustJSON(c)}) {
				return
			}
		}
		if a.includeUsage {
			c := a.chunk(nil)
			c.Usage = a.usage(outBytes)
			c.Timings = timings
			if !emit(frame{data: mustJSON(c)}) {
				return
			}
		}
		if a.withError { // After beyond the end: the error replaces [DONE]
			yield(a.errorFrame())
			return
		}
		if !st.NoDone {
			yield(frame{raw: "data: [DONE]\n\n"})
		}
	}
}

func (a *answer) callID(i int, tc ToolCall) string {
	if tc.ID != "" {
		return tc.ID
	}
	return fmt.Sprintf("call_%d_%d", a.stepIndex, i)
}

func (a *answer) finishReason() string {
	switch fr := a.step.FinishReason; fr {
	case "none":
		return ""
	case "":
		if len(a.step.ToolCalls) > 0 {
			return "tool_calls"
		}
		return "stop"
	default:
		return fr
	}
}

func tokens(bytes int) int { return (bytes + 3) / 4 }

func (a *answer) usage(outBytes int) *usageJSON {
	u := &usageJSON{PromptTokens: a.promptTokens, CompletionTokens: tokens(outBytes)}
	u.PromptTokensDetails.CachedTokens = a.cachedTokens
	if su := a.step.Usage; su != nil {
		u.PromptTokens, u.CompletionTokens = su.PromptTokens, su.CompletionTokens
		u.PromptTokensDetails.CachedTokens = su.CachedTokens
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return u
}

func (a *answer) timings(outBytes int) *Timings {
	if a.step.NoTimings {
		return nil
	}
	if a.step.Timings != nil {
		t := *a.step.Timings
		return &t
	}
	u := a.usage(outBytes)
	t := &Timings{
		CacheN:      u.PromptTokensDetails.CachedTokens,
		PromptN:     u.PromptTokens - u.PromptTokensDetails.CachedTokens,
		PredictedN:  u.CompletionTokens,
		PromptMS:    float64(u.PromptTokens-u.PromptTokensDetails.CachedTokens) * 0.5,
		PredictedMS: float64(u.CompletionTokens) * 20,
	}
	if t.PromptMS > 0 {
		t.PromptPerSecond = float64(t.PromptN) / t.PromptMS * 1000
	}
	if t.PredictedMS > 0 {
		t.PredictedPerSecond = float64(t.PredictedN) / t.PredictedMS * 1000
	}
	return t
}

// errorFrame renders the step's StreamError in its style.
func (a *answer) errorFrame() frame {
	e := a.step.StreamError
	msg := e.Message
	if msg == "" {
		msg = "fakellm: scripted error inside the stream"
	}
	code := e.Code
	if code == 0 {
		code = 500
	}
	typ := e.Type
	if typ == "" {
		typ = "server_error"
	}
	obj := string(mustJSON(map[string]any{"code": code, "message": msg, "type": typ}))
	switch e.Style {
	case "event":
		body := e.Body
		if body == "" {
			body = string(mustJSON(map[string]any{"message": msg, "code": code}))
		}
		return frame{raw: "event: error\ndata: " + body + "\n\n"}
	case "error_line":
		if e.Body != "" {
			obj = e.Body
		}
		return frame{raw: "error: " + obj + "\n\n"}
	case "bare":
		body := e.Body
		if body == "" {
			body = string(mustJSON(map[string]string{"error": msg}))
		}
		return frame{raw: body + "\n"}
	case "vllm":
		body := e.Body
		if body == "" {
			body = string(mustJSON(map[string]any{"object": "error", "message": msg, "type": "BadRequestError", "param": nil, "code": code}))
		}
		return frame{raw: "data: " + body + "\n\n"}
	default:
		body := e.Body
		if body == "" {
			body = `{"error":` + obj + `}`
		}
		return frame{raw: "data: " + body + "\n\n"}
	}
}

// pieces splits s into chunks: at the explicit offsets when given, else
// size bytes each, else after each space (about a word per chunk, like
// tokens). Never inside a UTF-8 character: servers hold back an
// incomplete character until its last byte, and JSON could not carry it.
func pieces(s string, size int, at []int) iter.Seq[string] {
	return func(yield func(string) bool) {
		if s == "" {
			return
		}
		if len(at) > 0 {
			prev := 0
			for _, off := range at {
				if off <= prev || off >= len(s) || !utf8.RuneStart(s[off]) {
					continue
				}
				if !yield(s[prev:off]) {
					return
				}
				prev = off
			}
			yield(s[prev:])
			return
		}
		for len(s) > 0 {
			n := cut(s, size)
			if !yield(s[:n]) {
				return
			}
			s = s[n:]
		}
	}
}

// cut is the length of the next piece of s.
func cut(s string, size int) int {
	if size <= 0 {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			return len(s)
		}
		// keep runs of spaces with the word before them
		j := i + 1
		for j < len(s) && s[j] == ' ' {
			j++
		}
		return j
	}
	if size >= len(s) {
		return len(s)
	}
	n := size
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n == 0 { // a character longer than size: send it whole
		_, w := utf8.DecodeRuneInString(s)
		n = w
	}
	return n
}

// repeated yields the pattern of r Times times (forever when Times is 0),
// each repetition split like any text.
func repeated(r *Repeat, size int) iter.Seq[string] {
	return func(yield func(string) bool) {
		if r == nil || r.Pattern == "" {
			return
		}
		for i := 0; r.Times == 0 || i < r.Times; i++ {
			for p := range pieces(r.Pattern, size, nil) {
				if !yield(p) {
					return
				}
			}
		}
	}
}
