package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// serverErrors are real error answers, in each server's own words, served
// by llmtest and read back through the client: parsing and Explain are
// tested together, over HTTP.
var serverErrors = []struct {
	name          string
	status        int
	body          string
	contentType   string
	class         llm.Class
	want          []string // substrings of Explain's line
	nPrompt, nCtx int
}{
	{"llama.cpp exceed_context_size_error", 400,
		`{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`,
		"", llm.ClassOverflow, []string{"llama.cpp", "9000 tokens", "8192 tokens", "/compact"}, 9000, 8192},
	{"llama.cpp older overflow", 400,
		`{"error":{"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}}`,
		"", llm.ClassOverflow, []string{"does not fit", "larger context"}, 0, 0},
	{"llama.cpp older 500 overflow", 500,
		`{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}`,
		"", llm.ClassOverflow, []string{"llama.cpp", "does not fit", "larger context"}, 0, 0},
	{"OpenAI context_length_exceeded", 400,
		`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
		"", llm.ClassOverflow, []string{"OpenAI", "130532 tokens", "128000 tokens"}, 130532, 128000},
	{"vLLM maximum context length (older)", 400,
		`{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`,
		"", llm.ClassOverflow, []string{"vLLM", "4000 tokens", "4096 tokens"}, 4000, 4096},
	{"vLLM maximum context length (newer)", 400,
		`{"error":{"message":"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages. None","type":"BadRequestError","param":null,"code":400}}`,
		"", llm.ClassOverflow, []string{"vLLM", "5000 tokens", "4096 tokens"}, 5000, 4096},
	{"LM Studio loaded with context length of only", 400,
		`{"error":"Trying to keep the first 5433 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}`,
		"", llm.ClassOverflow, []string{"LM Studio", "5433 tokens", "4096 tokens"}, 5433, 4096},
	{"llama.cpp without --jinja", 400,
		`{"error":{"code":400,"message":"tools param requires --jinja flag","type":"invalid_request_error"}}`,
		"", llm.ClassToolsRejected, []string{"--jinja"}, 0, 0},
	{"Ollama model without tools", 400,
		`{"error":{"message":"registry.ollama.ai/library/gemma2:2b does not support tools","type":"api_error","param":null,"code":null}}`,
		"", llm.ClassToolsRejected, []string{"Ollama", "supports tools"}, 0, 0},
	{"vLLM without auto tool choice", 400,
		`{"object":"error","message":"\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}`,
		"", llm.ClassToolsRejected, []string{"--enable-auto-tool-choice"}, 0, 0},
	{"llama.cpp --api-key", 401,
		`{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`,
		"", llm.ClassAuth, []string{"401", "apiKeyEnv"}, 0, 0},
	{"OpenAI invalid key", 401,
		`{"error":{"message":"Incorrect API key provided: sk-abc.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
		"", llm.ClassAuth, []string{"API key"}, 0, 0},
	{"Ollama model not pulled", 404,
		`{"error":{"message":"model \"qwen3:4b\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`,
		"", llm.ClassModelNotFound, []string{`"m"`, "fake-model"}, 0, 0},
	{"OpenAI model_not_found", 404,
		"{\"error\":{\"message\":\"The model `gpt-9` does not exist or you do not have access to it.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"model_not_found\"}}",
		"", llm.ClassModelNotFound, []string{"does not serve", "fake-model"}, 0, 0},
	{"LM Studio no model loaded", 400,
		"{\"error\":\"No models loaded. Please load a model in the developer page or use the `lms load` command.\"}",
		"", llm.ClassModelNotFound, []string{"LM Studio", "lms load"}, 0, 0},
	{"llama.cpp Loading model", 503,
		`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`,
		"", llm.ClassLoading, []string{"loading the model", "wait"}, 0, 0},
	{"rate limit", 429,
		`{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
		"", llm.ClassBusy, []string{"429", "--parallel"}, 0, 0},
	{"llama.cpp tool-call parse failure", 500,
		`{"error":{"code":500,"message":"Failed to parse input at pos 42: <tool_call>{\"name\"","type":"server_error"}}`,
		"", llm.ClassParseFailure, []string{"could not parse", "Failed to parse input at pos 42"}, 0, 0},
	{"any 500", 500,
		`{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}`,
		"", llm.ClassServer, []string{"(500)", "slot unavailable", "log"}, 0, 0},
	{"llama.cpp wrong path", 404,
		`{"error":{"code":404,"message":"File Not Found","type":"not_found_error"}}`,
		"", llm.ClassOther, []string{"404", "/v1"}, 0, 0},
	{"plain text error", 502, "Bad Gateway", "text/plain", llm.ClassServer, []string{"502", "Bad Gateway"}, 0, 0},
}

func TestExplainServerErrors(t *testing.T) {
	for _, tc := range serverErrors {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{HTTPError: &llmtest.HTTPError{
				Status: tc.status, Body: tc.body, ContentType: tc.contentType,
			}}}})
			defer srv.Close()
			c := llm.New(llm.Options{BaseURL: srv.URL(), RetryDelays: []time.Duration{}})
			_, err := c.Stream(context.Background(), hello(), nil)
			var ae *llm.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v (%T), want *APIError", err, err)
			}
			if ae.Status != tc.status || ae.Message == "" {
				t.Errorf("APIError %+v", ae)
			}
			if got := llm.Classify(err); got != tc.class {
				t.Errorf("Classify = %s, want %s", got, tc.class)
			}
			line := llm.Explain(err)
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("Explain = %q\nwant it to contain %q", line, w)
				}
			}
			if strings.Contains(line, "\n") {
				t.Errorf("Explain is not one line: %q", line)
			}
			n, ctxN, ok := llm.ContextOverflow(err)
			if ok != (tc.class == llm.ClassOverflow) || n != tc.nPrompt || ctxN != tc.nCtx {
				t.Errorf("ContextOverflow = %d, %d, %v; want %d, %d", n, ctxN, ok, tc.nPrompt, tc.nCtx)
			}
			if tc.nCtx > 0 && ae.NCtx != tc.nCtx {
				t.Errorf("APIError.NCtx = %d, want %d (learnt from the error)", ae.NCtx, tc.nCtx)
			}
		})
	}
}

// TestStartHintPerSystem: the line that says how to start a server names
// the way to install llama.cpp where it differs, and always a command
// that enables tool calls.
func TestStartHintPerSystem(t *testing.T) {
	for goos, want := range map[string]string{"linux": "start one: llama-server", "darwin": "brew install llama.cpp", "windows": "winget install llama.cpp", "freebsd": "start one: llama-server"} {
		h := llm.StartHintFor(goos)
		if !strings.Contains(h, want) || !strings.Contains(h, "--jinja") || !strings.Contains(h, "ollama serve") {
			t.Errorf("%s: %q, want it to hold %q, --jinja and ollama serve", goos, h, want)
		}
	}
}

// TestExplainOtherErrors covers the errors that are not HTTP answers.
func TestExplainOtherErrors(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://127.0.0.1:8080/v1/chat/completions",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: &osSyscallError{syscall.ECONNREFUSED}}}
	for _, tc := range []struct {
		name  string
		err   error
		class llm.Class
		want  []string
	}{
		{"connection refused", fmt.Errorf("llm: %w", refused), llm.ClassNoServer, []string{"127.0.0.1:8080", "llama-server", "--jinja"}},
		{"nothing detected", fmt.Errorf("%w (tried llamacpp 127.0.0.1:8080)", llm.ErrNoServer), llm.ClassNoServer, []string{"ollama serve", "--jinja"}},
		{"DNS", &url.Error{Op: "Post", URL: "http://nohost.invalid/v1", Err: &net.DNSError{Err: "no such host", Name: "nohost.invalid", IsNotFound: true}},
			llm.ClassNetwork, []string{"nohost.invalid", "baseURL"}},
		{"first-token stall", &llm.StallError{Phase: llm.StallFirstToken, Timeout: 3 * time.Minute}, llm.ClassStall, []string{"3m0s", "firstTokenTimeout"}},
		{"idle stall", &llm.StallError{Phase: llm.StallIdle, Timeout: 30 * time.Second, Delivered: true}, llm.ClassStall, []string{"30s", "watchdogTimeout"}},
		{"no finish_reason", fmt.Errorf("llm: %w", llm.ErrNoFinish), llm.ClassNoFinish, []string{"finish_reason", "log"}},
		{"in-stream error", &llm.StreamError{Message: "slot 0: out of memory", Type: "server_error"}, llm.ClassStream, []string{"middle of the answer", "out of memory"}},
		{"in-stream overflow", &llm.StreamError{Message: "the request exceeds the available context size, try increasing it", Type: "exceed_context_size_error"}, llm.ClassOverflow, []string{"does not fit"}},
		{"unknown window", fmt.Errorf("%w (x)", llm.ErrUnknownWindow), llm.ClassUnknownWindow, []string{"contextWindow"}},
		{"cancelled", fmt.Errorf("llm: %w", context.Canceled), llm.ClassCancelled, []string{"cancelled"}},
		{"anything else", errors.New("llm: something odd\nsecond line"), llm.ClassOther, []string{"something odd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := llm.Classify(tc.err); got != tc.class {
				t.Errorf("Classify = %s, want %s", got, tc.class)
			}
			line := llm.Explain(tc.err)
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("Explain = %q\nwant it to contain %q", line, w)
				}
			}
			if strings.Contains(line, "\n") || line == "" {
				t.Errorf("Explain is not one line: %q", line)
			}
		})
	}
}

// osSyscallError mimics *os.SyscallError so that errors.Is finds the errno.
type osSyscallError struct{ errno syscall.Errno }

func (e *osSyscallError) Error() string { return "connect: " + e.errno.Error() }
func (e *osSyscallError) Unwrap() error { return e.errno }
