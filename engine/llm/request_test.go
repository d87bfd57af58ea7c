package llm_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

func fullRequest() llm.Request {
	temp, topP, par := 0.0, 0.9, false
	return llm.Request{
		Model: "qwen3-4b",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are mm."},
			{Role: llm.RoleUser, Content: "read a"},
			{Role: llm.RoleAssistant, Reasoning: "I read it.", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}},
			{Role: llm.RoleTool, ToolCallID: "c1", Content: "text of a"},
		},
		Tools: []llm.ToolDef{
			{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"end":{"type":"integer"},"start":{"type":"integer"}},"required":["path"]}`)},
			{Name: "bash"},
		},
		Sampling:           llm.Sampling{Temperature: &temp, TopP: &topP, MaxTokens: 4096, ParallelToolCalls: &par},
		ReasoningEffort:    "low",
		ChatTemplateKwargs: map[string]any{"enable_thinking": false},
		ReturnProgress:     true,
	}
}

// sent streams req to a fresh one-step server with the provider and
// returns what the server received.
func sent(t *testing.T, provider, key string, req llm.Request, stream bool) llmtest.Recorded {
	t.Helper()
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "ok"}}})
	defer srv.Close()
	c := llm.New(llm.Options{Provider: provider, BaseURL: srv.URL(), APIKey: key})
	var err error
	if stream {
		_, err = c.Stream(context.Background(), req, nil)
	} else {
		_, err = c.Complete(context.Background(), req)
	}
	if err != nil {
		t.Fatal(err)
	}
	return srv.Requests()[0]
}

func TestRequestFields(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment") // must never be sent
	r := sent(t, llm.ProviderLlamaCpp, "", fullRequest(), true)
	var body map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{
		"model":                `"qwen3-4b"`,
		"stream":               `true`,
		"stream_options":       `{"include_usage":true}`,
		"temperature":          `0`,
		"top_p":                `0.9`,
		"max_tokens":           `4096`,
		"parallel_tool_calls":  `false`,
		"reasoning_effort":     `"low"`,
		"chat_template_kwargs": `{"enable_thinking":false}`,
		"return_progress":      `true`,
	} {
		if got := string(body[key]); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	if h := r.Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent without a configured key", h)
	}
	// Tools keep their order and the schema its property order.
	if len(r.Tools) != 2 || r.Tools[0].Name != "read_file" || r.Tools[1].Name != "bash" {
		t.Fatalf("tools %+v", r.Tools)
	}
	if got := string(r.Tools[0].Parameters); !strings.HasPrefix(got, `{"type":"object","properties":{"path":`) || !strings.Contains(got, `"end":{"type":"integer"},"start"`) {
		t.Errorf("schema reordered: %s", got)
	}
	if got := string(r.Tools[1].Parameters); got != `{"type":"object","properties":{}}` {
		t.Errorf("empty schema %s", got)
	}
	m := r.Messages
	if len(m) != 4 || m[0].Role != "system" || m[1].Role != "user" || m[3].Role != "tool" || m[3].ToolCallID != "c1" || m[3].Content != "text of a" {
		t.Fatalf("messages %+v", m)
	}
	if a := m[2]; a.Role != "assistant" || a.ReasoningContent != "I read it." || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "c1" || a.ToolCalls[0].Arguments != `{"path":"a"}` {
		t.Errorf("assistant message %+v", a)
	}
}

func TestProviderSpecificFields(t *testing.T) {
	for _, tc := range []struct {
		provider           string
		kwargs, progress   bool
		reasoningFieldName string
	}{
		{llm.ProviderLlamaCpp, true, true, "reasoning_content"},
		{llm.ProviderDMR, true, true, "reasoning_content"},
		{llm.ProviderOllama, false, false, "reasoning"},
		{llm.ProviderLMStudio, false, false, "reasoning"},
		{llm.ProviderVLLM, false, false, "reasoning_content"},
		{llm.ProviderOpenAI, false, false, "reasoning_content"},
		{"", false, false, "reasoning_content"},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			r := sent(t, tc.provider, "sk-test", fullRequest(), true)
			var v any
			if got := r.Field("chat_template_kwargs", &v); got != tc.kwargs {
				t.Errorf("chat_template_kwargs sent: %v, want %v", got, tc.kwargs)
			}
			if got := r.Field("return_progress", &v); got != tc.progress {
				t.Errorf("return_progress sent: %v, want %v", got, tc.progress)
			}
			if !r.Field("reasoning_effort", &v) {
				t.Error("reasoning_effort not sent")
			}
			a := r.Messages[2]
			got := map[string]string{"reasoning_content": a.ReasoningContent, "reasoning": a.Reasoning}
			if got[tc.reasoningFieldName] != "I read it." {
				t.Errorf("assistant reasoning sent as %+v, want %s", got, tc.reasoningFieldName)
			}
			if h := r.Header.Get("Authorization"); h != "Bearer sk-test" {
				t.Errorf("Authorization = %q", h)
			}
		})
	}
}

func TestRequestOmissions(t *testing.T) {
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	par := false
	req.Sampling.ParallelToolCalls = &par // no tools: must not be sent
	r := sent(t, llm.ProviderLlamaCpp, "", req, true)
	var v any
	for _, key := range []string{"tools", "parallel_tool_calls", "temperature", "top_p", "max_tokens", "reasoning_effort", "chat_template_kwargs", "return_progress"} {
		if r.Field(key, &v) {
			t.Errorf("%s sent", key)
		}
	}
	r = sent(t, llm.ProviderLlamaCpp, "", fullRequest(), false)
	for _, key := range []string{"stream", "stream_options", "return_progress"} {
		if r.Field(key, &v) {
			t.Errorf("non-streaming request has %s", key)
		}
	}
}

func TestComplete(t *testing.T) {
	sc, err := llmtest.Parse([]byte(`
steps:
  - http_error: {status: 503, body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}', times: 1}
    reasoning: "think"
    content: "Answer."
    tool_calls:
      - {name: bash, args: {command: ls}}
  - {stream_error: {message: "boom"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(sc)
	defer srv.Close()
	c := llm.New(fast(srv))
	r, err := c.Complete(context.Background(), hello())
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != "Answer." || r.Reasoning != "think" || r.FinishReason != "tool_calls" || !r.HasUsage || r.Timings == nil {
		t.Errorf("response %+v", r)
	}
	if len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "bash" || r.ToolCalls[0].Arguments != `{"command":"ls"}` {
		t.Errorf("tool calls %+v", r.ToolCalls)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one retry of the 503)", n)
	}
	if _, err := c.Complete(context.Background(), hello()); err == nil || !strings.Contains(llm.Explain(err), "boom") {
		t.Errorf("error answer: %v / %q", err, llm.Explain(err))
	}
}

func TestModels(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Models: []string{"qwen3-4b", "gemma-3"}})
	defer srv.Close()
	ids, err := llm.New(llm.Options{BaseURL: srv.URL()}).Models(context.Background())
	if err != nil || strings.Join(ids, ",") != "qwen3-4b,gemma-3" {
		t.Fatalf("Models = %v, %v", ids, err)
	}
}

// TestModelNotFoundNamesServedModels: a 404 about the model is explained
// with the list of models the server does serve.
func TestModelNotFoundNamesServedModels(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Models: []string{"qwen3-4b", "gemma-3"}, Steps: []llmtest.Step{{
		HTTPError: &llmtest.HTTPError{Status: 404, Body: `{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist.","type":"NotFoundError","code":404}}`},
	}}})
	defer srv.Close()
	req := hello()
	req.Model = "gpt-9"
	_, err := llm.New(fast(srv)).Stream(context.Background(), req, nil)
	got := llm.Explain(err)
	if !strings.Contains(got, `"gpt-9"`) || !strings.Contains(got, "qwen3-4b, gemma-3") {
		t.Fatalf("Explain = %q", got)
	}
}
