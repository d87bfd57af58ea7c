package setup

import (
	"bufio"
	"strings"
	"testing"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine/llm"
)

// TestReadKey: the keys of the picker as terminals send them — arrows in
// both cursor modes, Enter as CR or LF, Esc alone — one at a time.
func TestReadKey(t *testing.T) {
	t.Parallel()
	r := bufio.NewReader(strings.NewReader("\x1b[A\x1bOB\r\nj2\x03q"))
	var got []string
	for {
		if _, err := r.Peek(1); err != nil {
			break
		}
		key, _ := readKey(r)
		got = append(got, key)
	}
	if want := "up down enter enter j 2 quit quit"; strings.Join(got, " ") != want {
		t.Errorf("keys = %q, want %q", strings.Join(got, " "), want)
	}
	if k, _ := readKey(bufio.NewReader(strings.NewReader("\x1b"))); k != "quit" {
		t.Errorf("Esc alone = %q, want quit", k)
	}
}

// TestEndpoints: MM_BASE_URL's server and the user's configured one are
// asked first, then the usual ports, each once however it is written.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	o := Options{Env: config.Env{"MM_BASE_URL=http://127.0.0.1:8080/v1/"}, Endpoints: llm.KnownEndpoints()}
	eps := o.endpoints(config.Choice{BaseURL: "http://10.0.0.2:8080/v1", Model: "m"})
	var got []string
	for _, ep := range eps {
		got = append(got, ep.BaseURL)
	}
	want := "http://127.0.0.1:8080/v1/ http://10.0.0.2:8080/v1 http://127.0.0.1:11434/v1 http://127.0.0.1:12434/engines/v1 http://127.0.0.1:1234/v1 http://127.0.0.1:8000/v1"
	if strings.Join(got, " ") != want {
		t.Errorf("endpoints\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestNoServerLine: a server that answers with no model is named, with
// what loads one; else every place tried is.
func TestNoServerLine(t *testing.T) {
	t.Parallel()
	silent := llm.Reach{Endpoint: llm.Endpoint{Provider: llm.ProviderOllama, BaseURL: "http://127.0.0.1:11434/v1"}, Answers: true}
	if got := noServer([]llm.Reach{silent}, []llm.Reach{silent}); !strings.HasPrefix(got, "Ollama at 127.0.0.1:11434 answers but serves no model") {
		t.Errorf("silent server: %q", got)
	}
	none := []llm.Reach{{Endpoint: llm.Endpoint{Provider: llm.ProviderLlamaCpp, BaseURL: "http://127.0.0.1:8080/v1"}}}
	if got := noServer(none, nil); !strings.Contains(got, "(tried llama.cpp 127.0.0.1:8080)") || !strings.Contains(got, llm.StartHint()) {
		t.Errorf("no server: %q", got)
	}
}
