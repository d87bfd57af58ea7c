package llmtest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm/llmtest"
)

func mustParse(t *testing.T, y string) llmtest.Scenario {
	t.Helper()
	sc, err := llmtest.Parse([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func post(t *testing.T, ctx context.Context, srv *llmtest.Server, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return http.DefaultClient.Do(req)
}

// answer posts a request and returns the status and the whole body.
func answer(t *testing.T, srv *llmtest.Server, body string) (int, string) {
	t.Helper()
	resp, err := post(t, context.Background(), srv, body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

const streamReq = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown step key", "steps:\n  - contnet: hi\n", "line 2"},
		{"unknown tool call key", "steps:\n  - tool_calls:\n      - name: f\n        argz: {}\n", `line 4: unknown tool call key "argz"`},
		{"bad style", "steps:\n  - stream_error: {style: smoke}\n", "stream_error.style"},
		{"bad reasoning field", "steps:\n  - reasoning_field: thoughts\n", "reasoning_field"},
		{"args and args_raw", "steps:\n  - tool_calls:\n      - {name: f, args: {a: 1}, args_raw: '{}'}\n", "exclusive"},
		{"tool call without name", "steps:\n  - tool_calls:\n      - {args: {a: 1}}\n", "no name"},
		{"bad status", "steps:\n  - http_error: {status: 42}\n", "not an HTTP status"},
		{"empty", "", "empty scenario"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := llmtest.Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse error = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestArgsKeepOrderAndTypes(t *testing.T) {
	sc := mustParse(t, `
steps:
  - tool_calls:
      - name: f
        args: {z: 1, a: [true, null, 2.5], m: {y: "x", b: "007"}, s: hello}
`)
	b, err := json.Marshal(sc.Steps[0].ToolCalls[0].Args)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1,"a":[true,null,2.5],"m":{"y":"x","b":"007"},"s":"hello"}`
	if string(b) != want {
		t.Fatalf("args = %s, want %s", b, want)
	}
}

func TestGoScenarioArgs(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{
		ToolCalls: []llmtest.ToolCall{{Name: "f", Args: map[string]any{"path": "a.txt"}}},
	}}})
	defer srv.Close()
	_, body := answer(t, srv, `{"model":"m","messages":[]}`)
	if !strings.Contains(body, `"arguments":"{\"path\":\"a.txt\"}"`) {
		t.Fatalf("body = %s", body)
	}
}

func TestHTTPErrorTimesThenSuccess(t *testing.T) {
	srv := llmtest.NewServer(mustParse(t, `
steps:
  - http_error: {status: 503, body: '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}', times: 2}
    content: "ready"
`))
	defer srv.Close()
	for i, want := range []int{503, 503, 200} {
		status, body := answer(t, srv, streamReq)
		if status != want {
			t.Fatalf("request %d: status %d, want %d (%s)", i+1, status, want, body)
		}
		if i == 2 && !strings.Contains(body, `"content":"ready"`) {
			t.Fatalf("third answer lacks the content: %s", body)
		}
	}
	if srv.Remaining() != 0 {
		t.Fatalf("Remaining = %d", srv.Remaining())
	}
	for i, r := range srv.Requests() {
		if r.Step != 0 {
			t.Errorf("request %d answered by step %d", i, r.Step)
		}
	}
}

func TestStreamErrorTimesThenSuccess(t *testing.T) {
	srv := llmtest.NewServer(mustParse(t, `
steps:
  - content: "second try"
    stream_error: {after: 1, times: 1, message: "slot died"}
  - content: "next step"
`))
	defer srv.Close()
	_, first := answer(t, srv, streamReq)
	if !strings.Contains(first, `"message":"slot died"`) || strings.Contains(first, "[DONE]") {
		t.Fatalf("first answer: %s", first)
	}
	_, second := answer(t, srv, streamReq)
	if !strings.Contains(second, `"content":"second `) || !strings.Contains(second, "[DONE]") {
		t.Fatalf("second answer: %s", second)
	}
	_, third := answer(t, srv, streamReq)
	if !strings.Contains(third, `"content":"next `) {
		t.Fatalf("third answer: %s", third)
	}
}

func TestRecordedRequest(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "a"}}})
	defer srv.Close()
	body := `{"model":"qwen","stream":true,"stream_options":{"include_usage":true},"reasoning_effort":"low",
"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"part1 "},{"type":"text","text":"part2"}]},
{"role":"assistant","content":null,"reasoning_content":"thought","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}}]},
{"role":"tool","tool_call_id":"c1","content":"file text"}],
"tools":[{"type":"function","function":{"name":"read_file","description":"reads","parameters":{"type":"object"}}}]}`
	answer(t, srv, body)
	r := srv.Requests()[0]
	if r.Model != "qwen" || !r.Stream || !r.IncludeUsage || r.Step != 0 || r.Path != "/v1/chat/completions" {
		t.Fatalf("recorded %+v", r)
	}
	if string(r.Body) != body {
		t.Fatal("body not recorded byte for byte")
	}
	if got := r.Messages[1].Content; got != "part1 part2" {
		t.Errorf("content parts = %q", got)
	}
	a := r.Messages[2]
	if a.ReasoningContent != "thought" || len(a.ToolCalls) != 1 || a.ToolCalls[0].Name != "read_file" || a.ToolCalls[0].Arguments != `{"path":"a"}` {
		t.Errorf("assistant message = %+v", a)
	}
	if last := r.Last(); last.Role != "tool" || last.ToolCallID != "c1" || last.Content != "file text" {
		t.Errorf("last = %+v", last)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "read_file" || string(r.Tools[0].Parameters) != `{"type":"object"}` {
		t.Errorf("tools = %+v", r.Tools)
	}
	var effort string
	if !r.Field("reasoning_effort", &effort) || effort != "low" {
		t.Errorf("reasoning_effort = %q", effort)
	}
	if r.Field("chat_template_kwargs", &effort) {
		t.Error("Field reports an absent key")
	}
}

func TestCachedTokensFromCommonPrefix(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{{Content: "a", NoTimings: true}}})
	defer srv.Close()
	prefix := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"` + strings.Repeat("x", 400)
	answer(t, srv, prefix+`"}]}`)
	_, body := answer(t, srv, prefix+`"},{"role":"user","content":"more"}]}`)
	var usage struct {
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.Contains(line, `"usage"`) {
			json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &usage)
		}
	}
	if c := usage.Usage.PromptTokensDetails.CachedTokens; c < 100 || c >= usage.Usage.PromptTokens {
		t.Fatalf("cached %d of %d prompt tokens", c, usage.Usage.PromptTokens)
	}
}

func TestStallReleaseAndCancel(t *testing.T) {
	srv := llmtest.NewServer(mustParse(t, `
steps:
  - content: "one two three"
    stall_after: 2
  - content: "never sent"
    stall_after: 1
`))
	defer srv.Close()

	// Step 0: read up to the stall, release, read the rest.
	resp, err := post(t, context.Background(), srv, streamReq)
	if err != nil {
		t.Fatal(err)
	}
	<-srv.StepStarted(0)
	<-srv.StepStalled(0)
	srv.Release(0)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"content":"three"`) || !strings.Contains(string(b), "[DONE]") {
		t.Fatalf("released stream incomplete: %s", b)
	}

	// Step 1: the client goes away while the step holds.
	ctx, cancel := context.WithCancel(context.Background())
	resp, err = post(t, ctx, srv, streamReq)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() || !strings.Contains(sc.Text(), `"role":"assistant"`) {
		t.Fatalf("first line %q", sc.Text())
	}
	<-srv.StepStalled(1)
	cancel()
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func TestCloseUnblocksStalledHandlers(t *testing.T) {
	srv := llmtest.NewServer(mustParse(t, "steps:\n  - {content: x, stall_after: 0}\n"))
	resp, err := post(t, context.Background(), srv, streamReq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-srv.StepStalled(0)
	done := make(chan struct{})
	go func() { srv.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs on a stalled step")
	}
}

func TestConcurrentRequestsTakeDistinctSteps(t *testing.T) {
	const n = 20
	var sc llmtest.Scenario
	for i := range n {
		sc.Steps = append(sc.Steps, llmtest.Step{Content: strings.Repeat("w ", i+1), Delay: time.Millisecond})
	}
	srv := llmtest.NewServer(sc)
	defer srv.Close()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if status, body := answer(t, srv, streamReq); status != 200 || !strings.Contains(body, "[DONE]") {
				t.Errorf("status %d body %s", status, body)
			}
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, r := range srv.Requests() {
		if seen[r.Step] {
			t.Errorf("step %d answered twice", r.Step)
		}
		seen[r.Step] = true
	}
	if len(seen) != n || srv.Remaining() != 0 {
		t.Fatalf("%d distinct steps, %d remaining", len(seen), srv.Remaining())
	}
	if status, _ := answer(t, srv, streamReq); status != 500 {
		t.Fatalf("request beyond the steps: status %d, want 500", status)
	}
}

func TestLoop(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{{Content: "a"}, {Content: "b"}}})
	defer srv.Close()
	var got []string
	for range 5 {
		_, body := answer(t, srv, `{"model":"m","messages":[]}`)
		var c struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		json.Unmarshal([]byte(body), &c)
		got = append(got, c.Choices[0].Message.Content)
	}
	if strings.Join(got, "") != "ababa" {
		t.Fatalf("loop answers %v", got)
	}
}

func TestSideEndpoints(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{NCtx: 4096, Models: []string{"qwen3-4b", "gemma"}})
	defer srv.Close()
	for _, tc := range []struct{ url, want string }{
		{srv.URL() + "/models", `"id":"qwen3-4b"`},
		{srv.RootURL() + "/props", `"n_ctx":4096`},
		{srv.RootURL() + "/health", `"status":"ok"`},
		{srv.RootURL() + "/nope", `File Not Found`},
	} {
		resp, err := http.Get(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), tc.want) {
			t.Errorf("GET %s = %s, want %s", tc.url, b, tc.want)
		}
	}
}

func TestNotJSON(t *testing.T) {
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "a"}}})
	defer srv.Close()
	if status, _ := answer(t, srv, "{nope"); status != 400 {
		t.Fatalf("status %d", status)
	}
	if srv.Remaining() != 1 {
		t.Fatal("a bad request used a step")
	}
}

func TestEndlessRepeatStopsWithClient(t *testing.T) {
	srv := llmtest.NewServer(mustParse(t, `
steps:
  - tool_calls:
      - name: write_file
        args_raw: '{"content":"'
        args_repeat: {pattern: "Greet 2023-06-15 11:16:00 ", times: 0}
`))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := post(t, ctx, srv, streamReq)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	n := 0
	for sc.Scan() && n < 200 {
		if strings.Contains(sc.Text(), "Greet") {
			n++
		}
	}
	cancel()
	resp.Body.Close()
	if n < 200 {
		t.Fatalf("only %d repeated pieces", n)
	}
}

func TestLoadFile(t *testing.T) {
	sc, err := llmtest.Load("testdata/read_edit_answer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Steps) != 3 || sc.Steps[1].FinishReason != "length" {
		t.Fatalf("loaded %+v", sc)
	}
	if _, err := llmtest.Load("testdata/missing.yaml"); err == nil {
		t.Fatal("no error for a missing file")
	}
}

// prompt_progress chunks come only when the request asks for them with
// return_progress, as llama-server does: a fake that sent them unasked
// would let a client that never asks pass its tests.
func TestProgressOnlyWhenAsked(t *testing.T) {
	sc := mustParse(t, "steps:\n  - {content: a, progress: {total: 100, chunks: 2}}\n  - {content: b, progress: {total: 100, chunks: 2}}\n")
	srv := llmtest.NewServer(sc)
	defer srv.Close()
	_, unasked := answer(t, srv, streamReq)
	if strings.Contains(unasked, "prompt_progress") {
		t.Fatalf("prompt_progress sent without return_progress:\n%s", unasked)
	}
	asked := strings.Replace(streamReq, `"stream":true`, `"stream":true,"return_progress":true`, 1)
	_, body := answer(t, srv, asked)
	if n := strings.Count(body, `"prompt_progress"`); n != 2 {
		t.Fatalf("want 2 prompt_progress chunks when asked, got %d:\n%s", n, body)
	}
	if !srv.Requests()[1].ReturnProgress || srv.Requests()[0].ReturnProgress {
		t.Fatal("ReturnProgress not recorded")
	}
}

// A prompt larger than n_ctx gets llama-server's 400 with its numbers and
// uses no step; the next request that fits gets the step.
func TestPromptLargerThanWindowRefused(t *testing.T) {
	srv := llmtest.NewServer(mustParse(t, "n_ctx: 100\nsteps:\n  - content: fits\n"))
	defer srv.Close()
	big := strings.Replace(streamReq, `"hi"`, `"`+strings.Repeat("x", 600)+`"`, 1)
	status, body := answer(t, srv, big)
	if status != 400 {
		t.Fatalf("status %d, want 400", status)
	}
	var e struct {
		Error struct {
			Code          int    `json:"code"`
			Message       string `json:"message"`
			Type          string `json:"type"`
			NPromptTokens int    `json:"n_prompt_tokens"`
			NCtx          int    `json:"n_ctx"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	if e.Error.Type != "exceed_context_size_error" || e.Error.NCtx != 100 || e.Error.NPromptTokens <= 100 ||
		!strings.Contains(e.Error.Message, "exceeds the available context size (100 tokens)") {
		t.Fatalf("refusal body %s", body)
	}
	if status, body := answer(t, srv, streamReq); status != 200 || !strings.Contains(body, "fits") {
		t.Fatalf("the fitting request after a refusal: %d %s", status, body)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !reqs[0].Refused || reqs[1].Refused || srv.Remaining() != 0 {
		t.Fatalf("recorded %+v", reqs)
	}
}

// A reply answers any request whose last message matches, without using
// a step, as often as Times allows.
func TestReplies(t *testing.T) {
	srv := llmtest.NewServer(mustParse(t, "steps:\n  - content: first\n  - content: second\nreplies:\n  - {when: summarise, step: {content: notes}, times: 1}\n"))
	defer srv.Close()
	ask := func(text string) string {
		_, body := answer(t, srv, strings.Replace(streamReq, `"hi"`, `"`+text+`"`, 1))
		return body
	}
	for _, c := range []struct{ ask, want string }{{"hi", "first"}, {"please summarise", "notes"}, {"summarise again", "second"}} {
		if b := ask(c.ask); !strings.Contains(b, c.want) {
			t.Fatalf("%q answered %s, want %q", c.ask, b, c.want)
		}
	}
	if r := srv.Requests(); r[1].Step != -1 || r[1].Reply != 0 || r[2].Step != 1 {
		t.Fatalf("recorded steps %d %d %d", r[0].Step, r[1].Step, r[2].Step)
	}
}

// POST /v1/systemone is served only from a scenario's decisions: without
// them the route is llama-server's 404; with them each request takes the
// next, an error body is sent as is, and one past the end is refused
// naming the scenario.
func TestDecisions(t *testing.T) {
	postDecision := func(srv *llmtest.Server, body string) (int, string) {
		resp, err := http.Post(srv.URL()+"/systemone", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	plain := llmtest.NewServer(mustParse(t, "steps:\n  - content: hi\n"))
	defer plain.Close()
	if code, body := postDecision(plain, `{}`); code != 404 || !strings.Contains(body, "File Not Found") {
		t.Errorf("no decisions: %d %s", code, body)
	}

	srv := llmtest.NewServer(mustParse(t, `decisions:
  - answers: {route: {choice: run-tests, confidence: 0.9}}
  - status: 501
    body: '{"error":{"code":501,"message":"This model is not a decision model","type":"not_supported_error"}}'
`))
	defer srv.Close()
	code, body := postDecision(srv, `{"model":"d1","state":"the user asks to run the tests","questions":{"route":{"type":"choice"}}}`)
	var got struct {
		Model   string
		Answers map[string]map[string]any
		Usage   map[string]int
	}
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.Model != "d1" ||
		got.Answers["route"]["choice"] != "run-tests" || got.Usage["input_tokens"] < 1 {
		t.Errorf("first decision: %d %s", code, body)
	}
	if code, body := postDecision(srv, `{"questions":{}}`); code != 501 || !strings.Contains(body, "not a decision model") {
		t.Errorf("second decision (an error): %d %s", code, body)
	}
	if code, body := postDecision(srv, `{"questions":{}}`); code != 500 || !strings.Contains(body, "scenario exhausted: decision request 3") {
		t.Errorf("past the end: %d %s", code, body)
	}
	if code, _ := postDecision(srv, `not json`); code != 400 {
		t.Errorf("a body that is not JSON: %d", code)
	}
	reqs := srv.DecisionRequests()
	if len(reqs) != 3 || reqs[0].Model != "d1" || string(reqs[0].State) != `"the user asks to run the tests"` || reqs[0].Questions["route"] == nil {
		t.Errorf("recorded decision requests: %+v", reqs)
	}
}
