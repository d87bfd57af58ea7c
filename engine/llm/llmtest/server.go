package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Server is a scripted OpenAI-compatible model server. It is safe for
// concurrent requests: each chat request takes the next step under a lock,
// in order of arrival.
type Server struct {
	sc Scenario
	ts *httptest.Server

	mu         sync.Mutex
	next       int         // index of the next step to answer
	attempts   map[int]int // failed attempts already served per step (Times)
	replied    map[int]int // answers given per reply (Times)
	reqs       []Recorded
	decReqs    []DecisionRequest
	nextDec    int    // index of the next decision to answer
	prevPrompt []byte // the last request's rendered prompt, for cached_tokens
	started    map[int]chan struct{}
	stalled    map[int]chan struct{}
	released   map[int]chan struct{}

	done      chan struct{} // closed by Close: hanging handlers return
	closeOnce sync.Once
}

// NewServer starts a server on a local port for sc, like
// httptest.NewServer. Close it when done.
func NewServer(sc Scenario) *Server {
	s := newServer(sc)
	s.ts = httptest.NewServer(s.handler())
	return s
}

// Start serves sc on ln (cmd/fakellm listens on a fixed address).
func Start(ln net.Listener, sc Scenario) *Server {
	s := newServer(sc)
	s.ts = httptest.NewUnstartedServer(s.handler())
	_ = s.ts.Listener.Close()
	s.ts.Listener = ln
	s.ts.Start()
	return s
}

func newServer(sc Scenario) *Server {
	return &Server{
		sc:       sc,
		attempts: map[int]int{},
		replied:  map[int]int{},
		started:  map[int]chan struct{}{},
		stalled:  map[int]chan struct{}{},
		released: map[int]chan struct{}{},
		done:     make(chan struct{}),
	}
}

// URL is the base URL of the OpenAI API, ending in /v1.
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// RootURL is the server root (where llama-server serves /props, /health).
func (s *Server) RootURL() string { return s.ts.URL }

// Close unblocks every stalled step, closes client connections and shuts
// the server down, waiting for its handlers to return.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// Requests returns a copy of the chat-completion requests received so
// far, in order of arrival (failed attempts included).
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.reqs...)
}

// Remaining is the number of steps not answered yet (0 when the scenario
// was played to the end; always 0 with Loop).
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sc.Loop || s.next >= len(s.sc.Steps) {
		return 0
	}
	return len(s.sc.Steps) - s.next
}

// StepStarted returns a channel closed once step i (an index in
// Scenario.Steps) has begun answering: headers sent and flushed.
func (s *Server) StepStarted(i int) <-chan struct{} { return s.signal(s.started, i) }

// StepStalled returns a channel closed once step i has sent its
// StallAfter chunks and is waiting: the deterministic "mid-stream" point
// where a test cancels, or calls Release.
func (s *Server) StepStalled(i int) <-chan struct{} { return s.signal(s.stalled, i) }

// Release lets a stalled step i send the rest of its answer. Releasing
// before the stall is fine: the step then does not wait.
func (s *Server) Release(i int) { s.fire(s.released, i) }

func (s *Server) signal(m map[int]chan struct{}, i int) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, ok := m[i]
	if !ok {
		ch = make(chan struct{})
		m[i] = ch
	}
	return ch
}

func (s *Server) fire(m map[int]chan struct{}, i int) {
	ch := s.signal(m, i)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("POST /chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /models", s.models)
	mux.HandleFunc("GET /props", s.props)
	mux.HandleFunc("GET /health", health)
	mux.HandleFunc("GET /v1/health", health)
	mux.HandleFunc("POST /v1/systemone", s.decide)
	mux.HandleFunc("/", notFound)
	return mux
}

func health(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, `{"status":"ok"}`) }

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, id := range s.modelIDs() {
		out.Data = append(out.Data, model{ID: id, Object: "model", Created: created, OwnedBy: "fakellm"})
	}
	writeJSON(w, 200, string(mustJSON(out)))
}

func (s *Server) modelIDs() []string {
	if len(s.sc.Models) > 0 {
		return s.sc.Models
	}
	return []string{"fake-model"}
}

// nCtx is the window of the server's slot: the scenario's, else 8192.
func (s *Server) nCtx() int {
	if s.sc.NCtx > 0 {
		return s.sc.NCtx
	}
	return 8192
}

func (s *Server) props(w http.ResponseWriter, _ *http.Request) {
	n := s.nCtx()
	tmpl, _ := json.Marshal(s.sc.ChatTemplate)
	body := fmt.Sprintf(`{"default_generation_settings":{"n_ctx":%d,"params":{"n_predict":-1}},"total_slots":1,"model_path":"/models/%s.gguf","chat_template":%s,"build_info":"fakellm"}`, n, s.modelIDs()[0], tmpl)
	writeJSON(w, 200, body)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// plan is what the server decided to do with one request, under the lock.
type plan struct {
	ans       answer
	httpError *HTTPError
	exhausted string
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	rec := Recorded{Body: body, Header: r.Header.Clone(), Path: r.URL.Path}
	if err := decodeRequest(&rec); err != nil {
		rec.Step = -1
		s.record(rec)
		writeJSON(w, http.StatusBadRequest, string(mustJSON(map[string]any{"error": map[string]any{
			"code": 400, "message": "fakellm: request body is not JSON: " + err.Error(), "type": "invalid_request_error"}})))
		return
	}
	rec.PromptTokens = max(1, tokens(len(body)))
	if n := s.nCtx(); rec.PromptTokens > n {
		// llama-server refuses a prompt larger than its slot's context,
		// with these words and numbers (real-streams/09); the model never
		// sees it, so no step is used.
		rec.Step, rec.Refused = -1, true
		s.record(rec)
		writeJSON(w, http.StatusBadRequest, fmt.Sprintf(`{"error":{"code":400,"message":"request (%d tokens) exceeds the available context size (%d tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":%d,"n_ctx":%d}}`, rec.PromptTokens, n, rec.PromptTokens, n))
		return
	}
	p := s.take(&rec, body)
	if p.exhausted != "" {
		writeJSON(w, http.StatusInternalServerError, string(mustJSON(map[string]any{"error": map[string]any{
			"code": 500, "message": p.exhausted, "type": "scenario_exhausted"}})))
		return
	}
	ctx := r.Context()
	st := p.ans.step
	if st.Silence > 0 && !s.wait(ctx, st.Silence) {
		return
	}
	if e := p.httpError; e != nil {
		ct := e.ContentType
		if ct == "" {
			ct = "application/json; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(e.Status)
		_, _ = io.WriteString(w, e.Body)
		s.fire(s.started, p.ans.stepIndex)
		return
	}
	if rec.Stream {
		s.stream(ctx, w, &p.ans)
		return
	}
	s.complete(ctx, w, &p.ans)
}

func (s *Server) record(rec Recorded) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, rec)
}

// take picks the step answering this request and records the request.
func (s *Server) take(rec *Recorded, body []byte) plan {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.reqs) + 1
	if r, ok := s.reply(rec); ok {
		rec.Step = -1
		rec.Reply = r
		s.reqs = append(s.reqs, *rec)
		rendered := render(rec)
		cached := min(rec.PromptTokens, commonPrefix(s.prevPrompt, rendered)/4)
		s.prevPrompt = rendered
		a := answer{step: s.sc.Replies[r].Step, stepIndex: -1 - r, id: fmt.Sprintf("chatcmpl-fakellm-%d", n),
			model: rec.Model, includeUsage: rec.IncludeUsage, returnProgress: rec.ReturnProgress,
			promptTokens: rec.PromptTokens, cachedTokens: cached, nProbs: rec.NProbs}
		if a.model == "" {
			a.model = s.modelIDs()[0]
		}
		a.withError = a.step.StreamError != nil
		return plan{ans: a, httpError: a.step.HTTPError}
	}
	if s.next >= len(s.sc.Steps) && s.sc.Loop && len(s.sc.Steps) > 0 {
		s.next = 0
		clear(s.attempts)
	}
	if s.next >= len(s.sc.Steps) {
		rec.Step = -1
		s.reqs = append(s.reqs, *rec)
		return plan{exhausted: fmt.Sprintf("fakellm: scenario exhausted: request %d arrived but the scenario has only %d steps", n, len(s.sc.Steps))}
	}
	i := s.next
	st := s.sc.Steps[i]
	rec.Step = i
	s.reqs = append(s.reqs, *rec)

	prompt := rec.PromptTokens
	rendered := render(rec)
	cached := min(prompt, commonPrefix(s.prevPrompt, rendered)/4)
	s.prevPrompt = rendered
	p := plan{ans: answer{
		step: st, stepIndex: i, id: fmt.Sprintf("chatcmpl-fakellm-%d", n),
		model: rec.Model, includeUsage: rec.IncludeUsage, returnProgress: rec.ReturnProgress,
		promptTokens: prompt, cachedTokens: cached, nProbs: rec.NProbs,
	}}
	if p.ans.model == "" {
		p.ans.model = s.modelIDs()[0]
	}
	a := s.attempts[i]
	consume := true
	httpTimes := 0
	if e := st.HTTPError; e != nil {
		httpTimes = e.Times
		switch {
		case e.Times == 0:
			p.httpError = e
		case a < e.Times:
			p.httpError, consume = e, false
		}
	}
	if e := st.StreamError; e != nil && p.httpError == nil {
		switch {
		case e.Times == 0:
			p.ans.withError = true
		case a-httpTimes < e.Times:
			p.ans.withError, consume = true, false
		}
	}
	if consume {
		s.next++
		delete(s.attempts, i)
	} else {
		s.attempts[i] = a + 1
	}
	return p
}

// reply finds the reply answering rec, under the lock.
func (s *Server) reply(rec *Recorded) (int, bool) {
	last := rec.Last().Content
	for i, r := range s.sc.Replies {
		if strings.Contains(last, r.When) && (r.Times == 0 || s.replied[i] < r.Times) {
			s.replied[i]++
			return i, true
		}
	}
	return 0, false
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// wait waits d, or until the client goes away or the server closes.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// hold is the stall point of a step: signal it, then wait for Release,
// the client leaving or the server closing. It reports whether to go on.
func (s *Server) hold(ctx context.Context, i int) bool {
	s.fire(s.stalled, i)
	rel := s.signal(s.released, i)
	select {
	case <-rel:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, a *answer) {
	fl, _ := w.(http.Flusher)
	flush := func() {
		if fl != nil {
			fl.Flush()
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush()
	s.fire(s.started, a.stepIndex)
	st := a.step
	stallAt := -1
	if st.StallAfter != nil {
		stallAt = *st.StallAfter
	}
	sent := 0
	for f := range a.frames() {
		if sent == stallAt && !s.hold(ctx, a.stepIndex) {
			return
		}
		if sent > 0 {
			d := st.Delay
			if f.progress && st.Progress.Delay > 0 {
				d = st.Progress.Delay
			}
			if d > 0 && !s.wait(ctx, d) {
				return
			}
		}
		if st.Pings {
			_, _ = io.WriteString(w, ": ping\n\n")
		}
		var err error
		if f.data != nil {
			_, err = fmt.Fprintf(w, "data: %s\n\n", f.data)
		} else {
			_, err = io.WriteString(w, f.raw)
		}
		if err != nil {
			return
		}
		flush()
		sent++
		if ctx.Err() != nil {
			return
		}
	}
	if sent == stallAt {
		s.hold(ctx, a.stepIndex)
	}
}

// complete answers a non-streaming request with one JSON completion.
func (s *Server) complete(ctx context.Context, w http.ResponseWriter, a *answer) {
	st := a.step
	if st.StallAfter != nil && !s.hold(ctx, a.stepIndex) {
		return
	}
	if a.withError {
		e := a.errorFrame()
		body := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(e.raw, "event: error\n"), "data: "))
		body = strings.TrimPrefix(body, "error: ")
		writeJSON(w, http.StatusInternalServerError, body)
		s.fire(s.started, a.stepIndex)
		return
	}
	content := st.Content
	if r := st.ContentRepeat; r != nil {
		content += strings.Repeat(r.Pattern, repeatTimes(r))
	}
	msg := map[string]any{"role": "assistant", "content": content}
	if st.Reasoning != "" {
		field := st.ReasoningField
		if field == "" {
			field = "reasoning_content"
		}
		msg[field] = st.Reasoning
	}
	out := len(content) + len(st.Reasoning)
	var calls []any
	for i, tc := range st.ToolCalls {
		args, err := tc.argsText()
		if err != nil {
			args = err.Error()
		}
		if r := tc.ArgsRepeat; r != nil {
			args += strings.Repeat(r.Pattern, repeatTimes(r))
		}
		out += len(args)
		calls = append(calls, map[string]any{"id": a.callID(i, tc), "type": "function",
			"function": map[string]string{"name": tc.Name, "arguments": args}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	var fr any
	if f := a.finishReason(); f != "" {
		fr = f
	}
	ch := map[string]any{"finish_reason": fr, "index": 0, "message": msg}
	if lp := a.logprobs(); lp != nil {
		ch["logprobs"] = lp
	}
	resp := map[string]any{
		"choices": []any{ch},
		"created": created, "id": a.id, "model": a.model, "object": "chat.completion",
		"system_fingerprint": "fakellm", "usage": a.usage(out),
	}
	if t := a.timings(out); t != nil {
		resp["timings"] = t
	}
	s.fire(s.started, a.stepIndex)
	writeJSON(w, 200, string(mustJSON(resp)))
}

// repeatTimes bounds an endless repeat for a non-streaming answer, which
// has to end.
func repeatTimes(r *Repeat) int {
	if r.Times == 0 {
		return 10000
	}
	return r.Times
}
