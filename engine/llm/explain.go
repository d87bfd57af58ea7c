package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Class is what kind of failure an error is, for callers that react to it
// (compact on overflow, wait on loading, …) rather than only show it.
type Class string

// The classes Classify knows.
const (
	ClassOther         Class = "other"
	ClassCancelled     Class = "cancelled"
	ClassNoServer      Class = "no_server" // connection refused, nothing detected
	ClassNetwork       Class = "network"   // reset, DNS, cut mid-body
	ClassOverflow      Class = "context_overflow"
	ClassToolsRejected Class = "tools_rejected" // the server/template cannot do tool calls
	ClassModelNotFound Class = "model_not_found"
	ClassLoading       Class = "loading"
	ClassAuth          Class = "auth"
	ClassBusy          Class = "busy" // 429
	ClassParseFailure  Class = "parse_failure"
	ClassStall         Class = "stalled"
	ClassNoFinish      Class = "no_finish"
	ClassStream        Class = "stream_error"
	ClassServer        Class = "server_error"
	ClassUnknownWindow Class = "unknown_window"
)

// StartHint is how to start a model server able to do tool calls
// (--jinja) on this system, shown whenever none answers; what to do next
// (`mm setup`) is the caller's to add.
func StartHint() string { return startHint(runtime.GOOS) }

func startHint(goos string) string {
	const serve = "llama-server -hf ggml-org/Qwen3-4B-GGUF --jinja -c 32768 --port 8080 (or: ollama serve)"
	switch goos {
	case "darwin":
		return "start one: brew install llama.cpp, then " + serve
	case "windows":
		return "start one: winget install llama.cpp, then " + serve
	}
	return "start one: " + serve
}

// rule recognises one server's wording of one failure. Every server text
// mm recognises is in the table below, with the server that produces it:
// the only place where errors are compared by string (ARCHITECTURE rule 6).
type rule struct {
	server string
	class  Class
	status int            // 0: any status (or an in-stream error)
	field  string         // "type", "code" or "" (the message)
	needle string         // lower-case substring of that field
	re     *regexp.Regexp // instead of needle; may capture numbers
	// ctx and prompt are the capture groups (1-based) holding the
	// context window and the prompt size, 0 when absent.
	ctx, prompt int
}

var rules = sync.OnceValue(func() []rule {
	return []rule{
		// Context overflow, in each server's own words.
		{server: "llama.cpp", class: ClassOverflow, field: "type", needle: "exceed_context_size_error"},
		{server: "llama.cpp", class: ClassOverflow, needle: "exceeds the available context size"},
		// An older llama.cpp answers a 500 with no numbers.
		{server: "llama.cpp", class: ClassOverflow, status: 500, needle: "context size has been exceeded"},
		{server: "OpenAI", class: ClassOverflow, field: "code", needle: "context_length_exceeded",
			re: regexp.MustCompile(`maximum context length is (\d+) tokens.*?resulted in (\d+) tokens`), ctx: 1, prompt: 2},
		{server: "vLLM", class: ClassOverflow,
			re: regexp.MustCompile(`maximum context length is (\d+) tokens.*?(?:(\d+) in the messages|has (\d+) input tokens)`), ctx: 1, prompt: 2},
		{server: "vLLM", class: ClassOverflow, re: regexp.MustCompile(`maximum context length is (\d+) tokens`), ctx: 1},
		{server: "LM Studio", class: ClassOverflow,
			re: regexp.MustCompile(`keep the first (\d+) tokens.*?loaded with context length of only (\d+) tokens`), ctx: 2, prompt: 1},
		{server: "LM Studio", class: ClassOverflow, re: regexp.MustCompile(`loaded with context length of only (\d+) tokens`), ctx: 1},

		// Tool calls refused by the server or the model's template.
		{server: "llama.cpp", class: ClassToolsRejected, needle: "requires --jinja"},
		{server: "llama.cpp", class: ClassToolsRejected, needle: "unsupported param: tools"},
		{server: "Ollama", class: ClassToolsRejected, needle: "does not support tools"},
		{server: "vLLM", class: ClassToolsRejected, needle: "--enable-auto-tool-choice"},

		// The model.
		{server: "OpenAI", class: ClassModelNotFound, field: "code", needle: "model_not_found"},
		{server: "Ollama", class: ClassModelNotFound, re: regexp.MustCompile(`model ".*" not found`)},
		{server: "vLLM", class: ClassModelNotFound, status: 404, re: regexp.MustCompile(`the model .* does not exist`)},
		{server: "llama.cpp/DMR", class: ClassModelNotFound, status: 404, needle: "model not found"},
		{server: "LM Studio", class: ClassModelNotFound, needle: "no models loaded"},
		{server: "llama.cpp", class: ClassLoading, status: 503, needle: "loading model"},

		// llama.cpp could not parse what the model wrote (a 500, never retried).
		{server: "llama.cpp", class: ClassParseFailure, status: 500, needle: "failed to parse"},

		// Keys and load.
		{server: "any", class: ClassAuth, status: 401},
		{server: "any", class: ClassAuth, status: 403},
		{server: "any", class: ClassBusy, status: 429},
		{server: "any", class: ClassLoading, status: 503},
	}
})

// match finds the rule for a server error (status 0 for an in-stream
// error) and the numbers its text carries.
func match(status int, typ, code, msg string) (r *rule, nCtx, nPrompt int) {
	fields := map[string]string{"type": strings.ToLower(typ), "code": strings.ToLower(code), "": strings.ToLower(msg)}
	rs := rules()
	for i := range rs {
		r := &rs[i]
		if r.status != 0 && r.status != status {
			continue
		}
		if r.needle == "" && r.re == nil {
			if r.status != 0 {
				return r, 0, 0
			}
			continue
		}
		if r.needle != "" && !strings.Contains(fields[r.field], r.needle) {
			continue
		}
		if r.re != nil {
			m := r.re.FindStringSubmatch(fields[""])
			if m == nil {
				if r.needle == "" {
					continue
				}
				return r, 0, 0
			}
			return r, group(m, r.ctx), group(m, r.prompt, r.prompt+1)
		}
		return r, 0, 0
	}
	return nil, 0, 0
}

// group is the first non-empty capture among idx.
func group(m []string, idx ...int) int {
	for _, i := range idx {
		if i > 0 && i < len(m) && m[i] != "" {
			n, _ := strconv.Atoi(m[i])
			return n
		}
	}
	return 0
}

// overflowNumbers learns n_ctx (and the prompt size) from an overflow
// error's text when the server did not send them as fields.
func overflowNumbers(e *APIError) {
	r, nCtx, nPrompt := match(e.Status, e.Type, e.Code, e.Message)
	if r == nil || r.class != ClassOverflow {
		return
	}
	if e.NCtx == 0 {
		e.NCtx = nCtx
	}
	if e.NPromptTokens == 0 {
		e.NPromptTokens = nPrompt
	}
}

func modelNotFound(e *APIError) bool {
	r, _, _ := match(e.Status, e.Type, e.Code, e.Message)
	return r != nil && r.class == ClassModelNotFound
}

// ContextOverflow reports whether err is a server's "prompt too long"
// answer, with the numbers it gave (0 when it gave none).
func ContextOverflow(err error) (nPrompt, nCtx int, ok bool) {
	var ae *APIError
	if errors.As(err, &ae) {
		if r, _, _ := match(ae.Status, ae.Type, ae.Code, ae.Message); r != nil && r.class == ClassOverflow {
			return ae.NPromptTokens, ae.NCtx, true
		}
	}
	var se *StreamError
	if errors.As(err, &se) {
		if r, c, p := match(0, se.Type, se.Code, se.Message); r != nil && r.class == ClassOverflow {
			return p, c, true
		}
	}
	return 0, 0, false
}

// Classify says what kind of failure err is.
func Classify(err error) Class {
	c, _ := classify(err)
	return c
}

func classify(err error) (Class, *rule) {
	var (
		ae *APIError
		se *StreamError
		st *StallError
	)
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return ClassCancelled, nil
	case errors.As(err, &st):
		return ClassStall, nil
	case errors.Is(err, ErrNoFinish):
		return ClassNoFinish, nil
	case errors.Is(err, ErrNoServer), errors.Is(err, syscall.ECONNREFUSED):
		return ClassNoServer, nil
	case errors.Is(err, ErrUnknownWindow):
		return ClassUnknownWindow, nil
	case errors.As(err, &ae):
		if r, _, _ := match(ae.Status, ae.Type, ae.Code, ae.Message); r != nil {
			return r.class, r
		}
		if ae.Status >= 500 {
			return ClassServer, nil
		}
		return ClassOther, nil
	case errors.As(err, &se):
		if r, _, _ := match(0, se.Type, se.Code, se.Message); r != nil {
			return r.class, r
		}
		return ClassStream, nil
	}
	var te *transportError
	var ne net.Error
	if errors.As(err, &te) || errors.As(err, &ne) {
		return ClassNetwork, nil
	}
	return ClassOther, nil
}

// Explain turns an error from this package into one actionable line for
// the user. It never returns "".
func Explain(err error) string {
	if err == nil {
		return "no error"
	}
	class, r := classify(err)
	var (
		ae *APIError
		se *StreamError
		st *StallError
	)
	errors.As(err, &ae)
	errors.As(err, &se)
	server := ""
	if r != nil && r.server != "any" {
		server = r.server + ": "
	}
	switch class {
	case ClassCancelled:
		return "cancelled"
	case ClassStall:
		errors.As(err, &st)
		if st.Phase == StallFirstToken {
			return fmt.Sprintf("the model sent no token for %s after the request (firstTokenTimeout): a long prompt on a slow machine? raise firstTokenTimeout, or use llama.cpp, whose prompt progress keeps mm waiting", st.Timeout)
		}
		return fmt.Sprintf("the model stopped sending tokens for %s (watchdogTimeout): the server stalled; raise watchdogTimeout if it is only slow", st.Timeout)
	case ClassNoFinish:
		return "the server closed the stream before the answer was finished (no finish_reason): it probably crashed or ran out of memory — check its log"
	case ClassNoServer:
		var nl ErrNoLocalServer
		if errors.As(err, &nl) {
			return nl.Error()
		}
		return "no model server is answering" + at(err) + ": " + StartHint() + ", or run `mm setup` to choose another"
	case ClassUnknownWindow:
		return "the context window is unknown: set contextWindow in the config (the -c of llama-server, num_ctx of Ollama, the context length loaded in LM Studio)"
	case ClassNetwork:
		return network(err)
	case ClassOverflow:
		n, c, _ := ContextOverflow(err)
		switch {
		case n > 0 && c > 0:
			return fmt.Sprintf("%sthe conversation (%d tokens) does not fit the model's context window (%d tokens): compact it (/compact) or start the server with a larger context", server, n, c)
		case c > 0:
			return fmt.Sprintf("%sthe conversation does not fit the model's context window (%d tokens): compact it (/compact) or start the server with a larger context", server, c)
		}
		return server + "the conversation does not fit the model's context window: compact it (/compact) or start the server with a larger context"
	case ClassToolsRejected:
		if r.server == "llama.cpp" {
			return "llama.cpp: the server rejects tool calls: restart llama-server with --jinja"
		}
		if r.server == "vLLM" {
			return "vLLM: the server rejects tool calls: start vllm serve with --enable-auto-tool-choice --tool-call-parser <parser of the model>"
		}
		return server + "this model cannot do tool calls (its template has none): choose a model that supports tools"
	case ClassModelNotFound:
		model := "the configured model"
		if ae != nil && ae.Model != "" {
			model = strconv.Quote(ae.Model)
		}
		if ae != nil && len(ae.Served) > 0 {
			return fmt.Sprintf("%sthe server does not serve %s; it serves: %s — set model to one of them", server, model, strings.Join(ae.Served, ", "))
		}
		if r.server == "Ollama" {
			return fmt.Sprintf("Ollama: %s is not pulled: ollama pull it, or set model to one listed by ollama list", model)
		}
		if r.server == "LM Studio" {
			return "LM Studio: no model is loaded: load one in the app or with `lms load <model>`"
		}
		return fmt.Sprintf("%sthe server does not serve %s: set model to one it lists at /v1/models", server, model)
	case ClassLoading:
		return server + "the server is still loading the model: wait a few seconds and ask again"
	case ClassAuth:
		return fmt.Sprintf("the server refused the API key (%d): set apiKeyEnv to the variable holding the right key (or MM_API_KEY); a local llama-server only wants one if started with --api-key", ae.Status)
	case ClassBusy:
		return "the server is busy or rate-limited (429) and still was after the retries: wait and ask again, or give llama-server more slots (--parallel)"
	case ClassParseFailure:
		return server + "the server could not parse the model's output (a malformed tool call?); retrying the same request will not help: rephrase, or try another model or quantization — " + firstLine(ae.messageOr(se), 160)
	case ClassStream:
		return "the server failed in the middle of the answer: " + firstLine(se.Message, 200)
	case ClassServer:
		return fmt.Sprintf("the server failed (%d): %s — check its log", ae.Status, firstLine(ae.Message, 200))
	}
	if ae != nil {
		if ae.Status == 404 {
			return fmt.Sprintf("the server answered 404 (%s): check that baseURL ends with the API path, usually /v1", firstLine(ae.Message, 120))
		}
		return fmt.Sprintf("the server refused the request (%d): %s", ae.Status, firstLine(ae.Message, 200))
	}
	return firstLine(strings.TrimPrefix(err.Error(), "llm: "), 300)
}

func (e *APIError) messageOr(se *StreamError) string {
	if e != nil {
		return e.Message
	}
	if se != nil {
		return se.Message
	}
	return ""
}

// at names the address of a failed connection, when the error carries it.
func at(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			return " at " + u.Host
		}
	}
	return ""
}

func network(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		return fmt.Sprintf("cannot resolve %q: check the host in baseURL", de.Name)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "the model server did not answer in time" + at(err) + ": is it overloaded, or is baseURL right?"
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || strings.Contains(err.Error(), "unexpected EOF") {
		return "the connection to the model server was cut" + at(err) + ": it may have crashed (out of memory?) — check its log"
	}
	return "cannot talk to the model server" + at(err) + ": " + firstLine(strings.TrimPrefix(err.Error(), "llm: "), 200)
}
