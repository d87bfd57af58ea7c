package llm_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// fast are client options for tests: quick retries, generous watchdog.
func fast(srv *llmtest.Server) llm.Options {
	return llm.Options{
		Provider:    llm.ProviderLlamaCpp,
		BaseURL:     srv.URL(),
		RetryDelays: []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond},
	}
}

// fastOn serves the scenario written as yaml until the test ends, and
// returns the server and the options of fast for it.
func fastOn(t *testing.T, yaml string) (*llmtest.Server, llm.Options) {
	t.Helper()
	srv := llmtest.ServeYAML(t, yaml)
	return srv, fast(srv)
}

func hello() llm.Request {
	// ReturnProgress as the engine sends it: llama.cpp reports prompt
	// reading only when asked.
	return llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}, ReturnProgress: true}
}

// run streams one request against a fresh server for the scenario file.
func run(t *testing.T, file string, opts func(*llm.Options)) (llm.Response, []llm.Delta, error, *llmtest.Server) {
	t.Helper()
	sc, err := llmtest.Load("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(sc)
	t.Cleanup(srv.Close)
	o := fast(srv)
	if opts != nil {
		opts(&o)
	}
	var deltas []llm.Delta
	resp, err := llm.New(o).Stream(context.Background(), hello(), func(d llm.Delta) error {
		deltas = append(deltas, d)
		return nil
	})
	return resp, deltas, err, srv
}

// joined concatenates the deltas of one kind.
func joined(ds []llm.Delta, kind string) string {
	var b strings.Builder
	for _, d := range ds {
		switch kind {
		case "content":
			b.WriteString(d.Content)
		case "reasoning":
			b.WriteString(d.Reasoning)
		}
	}
	return b.String()
}

func exactlyOne(t *testing.T, d llm.Delta) {
	t.Helper()
	n := 0
	if d.Content != "" {
		n++
	}
	if d.Reasoning != "" {
		n++
	}
	if d.ToolCall != nil {
		n++
	}
	if d.Progress != nil {
		n++
	}
	if n != 1 {
		t.Errorf("delta %+v has %d fields set, want exactly one", d, n)
	}
}

func TestStreamScenarios(t *testing.T) {
	for _, tc := range []struct {
		file  string
		check func(t *testing.T, r llm.Response, ds []llm.Delta)
	}{
		{"reasoning_content.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if r.Reasoning != "The user greets me. I answer." || joined(ds, "reasoning") != r.Reasoning {
				t.Errorf("reasoning %q / deltas %q", r.Reasoning, joined(ds, "reasoning"))
			}
			if r.Content != "Hello!" || r.FinishReason != "stop" {
				t.Errorf("content %q finish %q", r.Content, r.FinishReason)
			}
			if ds[0].Reasoning == "" {
				t.Errorf("first delta %+v, want reasoning first", ds[0])
			}
		}},
		{"reasoning_field.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if r.Reasoning != "Short thought." || r.Content != "Hi." || r.Timings != nil {
				t.Errorf("response %+v", r)
			}
		}},
		{"think_tags.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if r.Content != "<think>hidden</think>Answer." || r.Reasoning != "" {
				t.Errorf("content %q reasoning %q", r.Content, r.Reasoning)
			}
		}},
		{"tool_calls_split.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			want := []llm.ToolCall{
				{ID: "call_0_0", Name: "read_file", Arguments: `{"path":"dir/hello.txt","start":1}`},
				{ID: "call_bash", Name: "bash", Arguments: `{"command":"ls -la"}`},
			}
			if len(r.ToolCalls) != 2 || r.ToolCalls[0] != want[0] || r.ToolCalls[1] != want[1] {
				t.Errorf("tool calls %+v, want %+v", r.ToolCalls, want)
			}
			if r.Content != "Let me look." || r.FinishReason != "tool_calls" {
				t.Errorf("content %q finish %q", r.Content, r.FinishReason)
			}
			var firsts, pieces int
			for _, d := range ds {
				if tc := d.ToolCall; tc != nil {
					if tc.Name != "" {
						firsts++
						if tc.ID == "" {
							t.Errorf("first fragment without id: %+v", tc)
						}
					} else if tc.Args != "" {
						pieces++
					}
				}
			}
			if firsts != 2 || pieces < 8 {
				t.Errorf("%d first fragments and %d argument pieces", firsts, pieces)
			}
		}},
		{"truncated_args.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if r.FinishReason != "length" || r.ToolCalls[0].Arguments != `{"path":"hello.txt","edits":[{"old":"hello","new":"bye"` {
				t.Errorf("response %+v", r)
			}
		}},
		{"usage_timings.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if !r.HasUsage || r.Usage != (llm.Usage{PromptTokens: 12000, CompletionTokens: 3, CachedTokens: 11000}) {
				t.Errorf("usage %+v (has %v)", r.Usage, r.HasUsage)
			}
			want := llm.Timings{CacheN: 11000, PromptN: 1000, PromptMS: 900.5, PredictedN: 3, PredictedMS: 60, PredictedPerSecond: 50}
			if r.Timings == nil || *r.Timings != want {
				t.Errorf("timings %+v", r.Timings)
			}
		}},
		{"finish_no_usage.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if !r.HasUsage || r.Usage != (llm.Usage{PromptTokens: 12, CompletionTokens: 1, CachedTokens: 5}) {
				t.Errorf("usage from timings %+v", r.Usage)
			}
		}},
		{"prompt_progress.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			var ps []llm.Progress
			for _, d := range ds {
				if d.Progress != nil {
					ps = append(ps, *d.Progress)
				}
			}
			if len(ps) != 3 || ps[2].Processed != 25300 || ps[0].Total != 25300 || ps[0].Cache != 1000 || ds[0].Progress == nil {
				t.Errorf("progress deltas %+v", ps)
			}
			if r.Content != "read it" {
				t.Errorf("content %q", r.Content)
			}
		}},
		{"pings.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if r.Content != "still here" {
				t.Errorf("content %q", r.Content)
			}
		}},
		{"no_done.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if r.Content != "complete" || r.FinishReason != "stop" {
				t.Errorf("response %+v", r)
			}
		}},
		{"sloppy_sse.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if r.Content != "abc" || r.FinishReason != "stop" {
				t.Errorf("response %+v", r)
			}
		}},
		{"ollama_tool_calls.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if len(r.ToolCalls) != 2 || r.ToolCalls[0].ID != "call_a" || r.ToolCalls[1].Arguments != `{"path":"b"}` {
				t.Errorf("tool calls %+v", r.ToolCalls)
			}
		}},
		{"json_not_sse.yaml", func(t *testing.T, r llm.Response, ds []llm.Delta) {
			if r.Content != "whole" || r.Usage.PromptTokens != 3 {
				t.Errorf("response %+v", r)
			}
		}},
	} {
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) {
			r, ds, err, srv := run(t, tc.file, nil)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			for _, d := range ds {
				exactlyOne(t, d)
			}
			if joined(ds, "content") != r.Content {
				t.Errorf("content deltas %q != response %q", joined(ds, "content"), r.Content)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
			tc.check(t, r, ds)
		})
	}
}

func TestStreamErrorsInsideTheStream(t *testing.T) {
	for _, style := range []string{"data", "event", "error_line", "bare", "vllm"} {
		t.Run(style, func(t *testing.T) {
			r, _, err, srv := run(t, "stream_error_"+style+".yaml", nil)
			var se *llm.StreamError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v (%T), want *StreamError", err, err)
			}
			if se.Message != "slot 0 failed: out of memory" {
				t.Errorf("message %q", se.Message)
			}
			if r.Content == "" {
				t.Error("the content before the error is lost")
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%d requests: an in-stream error is not retried by Stream", n)
			}
			if got := llm.Explain(err); !strings.Contains(got, "out of memory") {
				t.Errorf("Explain = %q", got)
			}
		})
	}
}

func TestNoFinishReasonIsATransportError(t *testing.T) {
	r, _, err, srv := run(t, "no_finish.yaml", nil)
	if !errors.Is(err, llm.ErrNoFinish) {
		t.Fatalf("err = %v, want ErrNoFinish", err)
	}
	if r.Content != "half an ans" {
		t.Errorf("partial content %q", r.Content)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests: content was shown, no retry allowed", n)
	}
	if got := llm.Explain(err); !strings.Contains(got, "finish_reason") {
		t.Errorf("Explain = %q", got)
	}
}

// TestArgsSplitAtEveryByte cuts the arguments at every possible offset,
// then at every byte at once: the assembled call is always the same.
func TestArgsSplitAtEveryByte(t *testing.T) {
	args := `{"path":"dir/é.txt","edits":[{"old":"a\"b","new":"c\\nd"}],"n":-1.5e3}`
	var sc llmtest.Scenario
	for i := 1; i < len(args); i++ {
		sc.Steps = append(sc.Steps, llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "edit_file", ArgsRaw: args, SplitAt: []int{i}}}})
	}
	sc.Steps = append(sc.Steps, llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "edit_file", ArgsRaw: args, ChunkSize: 1}}})
	srv := llmtest.NewServer(sc)
	defer srv.Close()
	c := llm.New(fast(srv))
	for i := range sc.Steps {
		var got strings.Builder
		r, err := c.Stream(context.Background(), hello(), func(d llm.Delta) error {
			if d.ToolCall != nil {
				got.WriteString(d.ToolCall.Args)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if len(r.ToolCalls) != 1 || r.ToolCalls[0].Arguments != args || got.String() != args {
			t.Fatalf("step %d: assembled %+v, deltas %q", i, r.ToolCalls, got.String())
		}
	}
}

func TestAbortFromCallbackClosesTheStream(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{
		ToolCalls: []llmtest.ToolCall{{Name: "write_file", ArgsRaw: `{"content":"`,
			ArgsRepeat: &llmtest.Repeat{Pattern: "Greet 2023-06-15 11:16:00 ", Times: 0}}},
	}}})
	defer srv.Close()
	errRunaway := errors.New("runaway arguments")
	n := 0
	_, err := llm.New(fast(srv)).Stream(context.Background(), hello(), func(d llm.Delta) error {
		if d.ToolCall != nil {
			n++
			if n == 50 {
				return errRunaway
			}
		}
		return nil
	})
	// The repeat is endless: returning at all proves the stream was cut.
	if !errors.Is(err, errRunaway) {
		t.Fatalf("err = %v, want the callback's error", err)
	}
	if n != 50 {
		t.Fatalf("callback called %d times after aborting", n-50)
	}
	if len(srv.Requests()) != 1 {
		t.Fatal("an aborted generation was retried")
	}
}

func TestCancelMidStream(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "one two three", StallAfter: ptr(2)}}})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-srv.StepStalled(0)
		<-got // the first word arrived: we are mid-stream
		cancel()
	}()
	start := time.Now()
	r, err := llm.New(fast(srv)).Stream(ctx, hello(), func(d llm.Delta) error {
		if d.Content != "" {
			close(got)
		}
		return nil
	})
	<-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("cancel took %s", d)
	}
	if r.Content != "one " {
		t.Errorf("partial content %q", r.Content)
	}
	if llm.Explain(err) != "cancelled" || llm.Classify(err) != llm.ClassCancelled {
		t.Errorf("Explain = %q", llm.Explain(err))
	}
	if len(srv.Requests()) != 1 {
		t.Error("a cancelled call was retried")
	}
}

func ptr[T any](v T) *T { return &v }

// TestNonSSEAnswers: a server that ignores "stream" answers one JSON
// completion (read as one answer); a web page at baseURL is named as such
// and not retried.
func TestNonSSEAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, ct, body, content, errWant string
	}{
		{"JSON completion", "application/json", `{"choices":[{"index":0,"message":{"role":"assistant","content":"whole","reasoning_content":"r"},"finish_reason":"stop"}]}`, "whole", ""},
		{"JSON error with 200", "application/json", `{"error":{"message":"model crashed"}}`, "", "model crashed"},
		{"web page", "text/html; charset=utf-8", `<html><body>Welcome</body></html>`, "", "web page"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n++
				w.Header().Set("Content-Type", tc.ct)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := llm.New(llm.Options{BaseURL: srv.URL + "/v1", RetryDelays: []time.Duration{time.Millisecond}})
			r, err := c.Stream(context.Background(), hello(), nil)
			if tc.errWant == "" {
				if err != nil || r.Content != tc.content || r.Reasoning != "r" {
					t.Fatalf("Stream = %+v, %v", r, err)
				}
				return
			}
			if err == nil || !strings.Contains(llm.Explain(err), tc.errWant) {
				t.Fatalf("err = %v, Explain %q", err, llm.Explain(err))
			}
			if n != 1 {
				t.Errorf("%d requests: not retryable", n)
			}
		})
	}
}
