package setup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/doctor"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/cmd/mm/internal/line"
	"github.com/mm-agent/mm/engine/llm"
)

// Usage is the usage line of mm setup, with what it does.
const Usage = "usage: mm setup\n  finds the model servers on this machine, lets you pick a model (arrow keys and Enter), checks a tool call with it and saves it in your own config (~/.config/mm/agent.yaml)"

// Options is what mm setup works with; cmd/mm fills it from the process.
type Options struct {
	// Env is the environment mm was started with: the home directory
	// (where the user's config is), MM_BASE_URL and MM_PROVIDER (a server
	// offered beside the usual ones), NO_COLOR and TERM.
	Env config.Env
	// Endpoints are the usual local servers looked for; nil is
	// llm.KnownEndpoints().
	Endpoints []llm.Endpoint
	// HTTPClient asks the servers; nil is a default client.
	HTTPClient *http.Client
	// In is where the choice is read; Out gets the list and the result,
	// Err the one line of a failure.
	In       io.Reader
	Out, Err io.Writer
}

// option is one model the user can pick: a model of a server that
// answered.
type option struct {
	kind, base, model string
	current           bool
}

func (o option) label(width int) string {
	s := fmt.Sprintf("%-*s  %s at %s", width, o.model, kindName(o.kind), hostOf(o.base))
	if o.current {
		s += "  (current)"
	}
	return s
}

// Run is `mm setup`; it returns the exit code.
func Run(ctx context.Context, o Options) int {
	current, _, err := config.UserChoice(o.Env)
	if err != nil {
		fmt.Fprintln(o.Err, "mm:", err)
		return exitcode.Usage
	}
	eps := o.endpoints(current)
	reaches := llm.Survey(ctx, o.HTTPClient, eps)
	opts, silent := o.options(ctx, reaches, current)
	if len(opts) == 0 {
		fmt.Fprintln(o.Err, "mm:", noServer(reaches, silent))
		return exitcode.Failed
	}
	if current.Model != "" && !opts[0].current {
		fmt.Fprintf(o.Out, "mm: your current choice, %s at %s, is not served now\n", current.Model, current.BaseURL)
	}
	i, err := o.pick(ctx, opts)
	if err != nil {
		fmt.Fprintln(o.Err, "mm:", err.Error()+"; your config is unchanged")
		return exitcode.Failed
	}
	return o.save(ctx, opts[i])
}

// endpoints are the servers to ask: MM_BASE_URL's, the one the user's
// config names, then the usual local ports — each once.
func (o Options) endpoints(current config.Choice) []llm.Endpoint {
	known := o.Endpoints
	if known == nil {
		known = llm.KnownEndpoints()
	}
	var eps []llm.Endpoint
	seen := map[string]bool{}
	add := func(ep llm.Endpoint) {
		key := strings.TrimRight(ep.BaseURL, "/")
		if key != "" && !seen[key] {
			seen[key] = true
			eps = append(eps, ep)
		}
	}
	add(llm.Endpoint{Provider: o.Env.Get("MM_PROVIDER"), BaseURL: o.Env.Get("MM_BASE_URL")})
	add(llm.Endpoint{Provider: current.Provider, BaseURL: current.BaseURL})
	for _, ep := range known {
		add(ep)
	}
	return eps
}

// options lists the models of the servers that answered, the current
// choice first; silent counts the servers that answered with no model.
func (o Options) options(ctx context.Context, reaches []llm.Reach, current config.Choice) (opts []option, silent []llm.Reach) {
	for _, r := range reaches {
		if !r.Answers {
			continue
		}
		if len(r.Models) == 0 {
			silent = append(silent, r)
			continue
		}
		kind := r.Provider
		if kind == "" {
			dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			kind = llm.DetectKind(dctx, o.HTTPClient, r.BaseURL, "")
			cancel()
		}
		for _, m := range r.Models {
			cur := current.Model == m && strings.TrimRight(current.BaseURL, "/") == strings.TrimRight(r.BaseURL, "/")
			op := option{kind: kind, base: r.BaseURL, model: m, current: cur}
			if cur {
				opts = append([]option{op}, opts...)
			} else {
				opts = append(opts, op)
			}
		}
	}
	return opts, silent
}

// noServer is the one line when there is nothing to pick.
func noServer(reaches []llm.Reach, silent []llm.Reach) string {
	if len(silent) > 0 {
		return fmt.Sprintf("%s at %s answers but serves no model — load one (llama-server -hf …, ollama pull …), then run `mm setup` again", kindName(silent[0].Provider), hostOf(silent[0].BaseURL))
	}
	var tried []string
	for _, r := range reaches {
		tried = append(tried, kindName(r.Provider)+" "+hostOf(r.BaseURL))
	}
	return "no model server answers on this machine (tried " + strings.Join(tried, ", ") + ") — " + llm.StartHint() + ", then run `mm setup` again"
}

// pick asks which option: with the arrow keys on a terminal, by number
// otherwise (a script, an editor's panel, a terminal that cannot move the
// cursor).
func (o Options) pick(ctx context.Context, opts []option) (int, error) {
	width := 0
	for _, op := range opts {
		width = min(max(width, len(op.model)), 40)
	}
	labels := make([]string, len(opts))
	for i, op := range opts {
		labels[i] = op.label(width)
	}
	in, isFile := o.In.(*os.File)
	if isFile && line.IsTerminal(in) && line.IsTerminal(o.Out) && o.Env.Get("TERM") != "dumb" && runtime.GOOS != "windows" {
		fmt.Fprintln(o.Out, "Choose the model mm uses (↑/↓ and Enter; q leaves):")
		return pickKeys(in, o.Out, labels, line.Colour(o.Out, o.Env.Get))
	}
	return pickNumber(ctx, o.In, o.Out, labels)
}

// pickNumber lists the options numbered and reads the number of one; a
// line that is not one asks again, Enter alone takes the first. Ctrl-C
// (ctx) ends the wait: the read cannot be interrupted, so it is left to
// the process's exit, which follows.
func pickNumber(ctx context.Context, in io.Reader, out io.Writer, labels []string) (int, error) {
	fmt.Fprintln(out, "Models the servers on this machine serve:")
	for i, l := range labels {
		fmt.Fprintf(out, "  %d) %s\n", i+1, l)
	}
	r := bufio.NewReader(in)
	type read struct {
		s   string
		err error
	}
	for {
		fmt.Fprintf(out, "Choose one [1-%d, Enter: 1]: ", len(labels))
		got := make(chan read, 1)
		go func() {
			s, err := r.ReadString('\n')
			got <- read{s, err}
		}()
		var s string
		var err error
		select {
		case rd := <-got:
			s, err = rd.s, rd.err
		case <-ctx.Done():
			fmt.Fprintln(out)
			return 0, errors.New("no model chosen (interrupted)")
		}
		if !line.IsTerminal(in) {
			fmt.Fprintln(out) // a terminal echoed the Enter; a pipe did not
		}
		s = strings.TrimSpace(s)
		if s == "" && err == nil {
			return 0, nil
		}
		if n, convErr := strconv.Atoi(s); convErr == nil && n >= 1 && n <= len(labels) {
			return n - 1, nil
		}
		if err != nil {
			return 0, errors.New("no model chosen (the input ended)")
		}
		fmt.Fprintf(out, "%q is not one of the numbers.\n", s)
	}
}

// save checks a tool call with the choice, as mm doctor does, and saves
// it in the user's own config when it worked.
func (o Options) save(ctx context.Context, op option) int {
	fmt.Fprintf(o.Out, "mm: checking a tool call with %s on %s at %s…\n", op.model, kindName(op.kind), hostOf(op.base))
	c := llm.New(llm.Options{Provider: op.kind, BaseURL: op.base, HTTPClient: o.HTTPClient})
	if !doctor.ToolCalls(ctx, c, op.model, o.Out, line.Colour(o.Out, o.Env.Get)) {
		fmt.Fprintln(o.Err, "mm: not saved: the model did not complete a tool call — fix what the line above says, or run `mm setup` again and pick another model")
		return exitcode.Failed
	}
	path, err := config.SaveChoice(o.Env, config.Choice{Provider: op.kind, BaseURL: op.base, Model: op.model})
	if err != nil {
		fmt.Fprintln(o.Err, "mm: not saved:", err)
		return exitcode.Failed
	}
	fmt.Fprintf(o.Out, "mm: saved in %s: %s on %s at %s — the editor and `mm` use it from now on\n", path, op.model, kindName(op.kind), op.base)
	// The environment's overrides win over the file: say so when one
	// says something else than the choice.
	for _, v := range []struct{ name, chosen string }{{"MM_BASE_URL", op.base}, {"MM_MODEL", op.model}, {"MM_PROVIDER", op.kind}} {
		if val := o.Env.Get(v.name); val != "" && val != v.chosen {
			fmt.Fprintf(o.Out, "mm: note: %s=%s is set here and wins over your config while it is\n", v.name, val)
		}
	}
	return exitcode.OK
}

// kindName is how a server kind reads in a sentence.
func kindName(kind string) string {
	switch kind {
	case llm.ProviderLlamaCpp:
		return "llama.cpp"
	case llm.ProviderOllama:
		return "Ollama"
	case llm.ProviderDMR:
		return "Docker Model Runner"
	case llm.ProviderLMStudio:
		return "LM Studio"
	case llm.ProviderVLLM:
		return "vLLM"
	}
	return "an OpenAI-compatible server"
}

func hostOf(base string) string {
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		return u.Host
	}
	return base
}
