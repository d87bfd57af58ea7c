package risk

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/mm-agent/mm/engine/oneshot"
)

// Risk is a named risk, with an optional definition of one's own.
type Risk struct {
	Name string
	// Definition, when set, is a risk the model was not trained on: the
	// template is given it as risk_definition (Granite Guardian 3.1/3.2)
	// and custom_criteria (3.3).
	Definition string
}

// Verdict is a guard's answer about one risk.
type Verdict struct {
	Risk string
	// P is the probability that the text carries the risk.
	P float64
	// FromText: the server sent no logprobs, so P is the answer text
	// read as 1 (yes) or 0 (no).
	FromText bool
}

// Client asks one guard model.
type Client struct {
	// BaseURL is the server's OpenAI-compatible base, e.g.
	// http://127.0.0.1:8080/v1.
	BaseURL string
	// Model is sent when set.
	Model  string
	APIKey string
	// Ollama puts the risk name in a system message, the way Ollama's
	// guardian templates read it (its /v1 route ignores
	// chat_template_kwargs).
	Ollama bool
	// Timeout bounds one request (0: DefaultTimeout).
	Timeout time.Duration
	// HTTP is the client used (nil: http.DefaultClient).
	HTTP *http.Client
}

// DefaultTimeout bounds one guard request: a warm 2–8B guard answers a
// few tokens in well under a second on a GPU, a few seconds on a CPU.
const DefaultTimeout = 10 * time.Second

// maxTokens leaves room for Granite Guardian 3.3's "<score> yes </score>"
// and 3.2's "Yes\n<confidence> High </confidence>"; only the first yes/no
// token is read.
const maxTokens = 12

// topN candidates are asked per token: the other answer is always among
// them for a yes/no classifier.
const topN = 10

// Endpoint is the chat-completions URL.
func (c *Client) Endpoint() string {
	return strings.TrimRight(c.BaseURL, "/") + "/chat/completions"
}

// Ask asks how likely text carries risk r.
func (c *Client) Ask(ctx context.Context, text string, r Risk) (Verdict, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	status, raw, err := oneshot.Post(ctx, oneshot.Request{URL: c.Endpoint(), APIKey: c.APIKey, Body: c.request(text, r), HTTP: c.HTTP,
		Name: "guard", Server: c.BaseURL, Timeout: timeout})
	if err != nil {
		return Verdict{}, err
	}
	if status != http.StatusOK {
		return Verdict{}, c.statusError(status, raw)
	}
	v, err := c.parse(raw)
	v.Risk = r.Name
	return v, err
}

// request is the chat-completions body: the text as the one user message;
// the risk in chat_template_kwargs.guardian_config, under the names each
// Granite Guardian template reads (risk_name and risk_definition for 3.1
// and 3.2, criteria_id and custom_criteria for 3.3; a template ignores the
// others).
func (c *Client) request(text string, r Risk) map[string]any {
	cfg := map[string]string{"risk_name": r.Name}
	if r.Definition != "" {
		cfg["risk_definition"] = r.Definition
		cfg["custom_criteria"] = r.Definition
	} else {
		cfg["criteria_id"] = r.Name
	}
	msgs := []map[string]string{{"role": "user", "content": text}}
	if c.Ollama {
		msgs = append([]map[string]string{{"role": "system", "content": r.Name}}, msgs...)
	}
	req := map[string]any{
		"messages":             msgs,
		"temperature":          0,
		"max_tokens":           maxTokens,
		"stream":               false,
		"logprobs":             true,
		"top_logprobs":         topN,
		"chat_template_kwargs": map[string]any{"guardian_config": cfg},
	}
	if c.Model != "" {
		req["model"] = c.Model
	}
	return req
}

type candidate struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
}

type completion struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		Logprobs *struct {
			Content []struct {
				candidate
				Top []candidate `json:"top_logprobs"`
			} `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
}

// parse reads the probability from the first yes/no token's candidates,
// else from the answer text.
func (c *Client) parse(raw []byte) (Verdict, error) {
	var r completion
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Choices) == 0 || r.Choices[0].Message.Content == nil {
		return Verdict{}, &oneshot.Error{Kind: oneshot.Malformed, Line: fmt.Sprintf("the guard server's answer is not a chat completion (%s)", oneshot.Short(string(raw)))}
	}
	ch := r.Choices[0]
	text := *ch.Message.Content
	if ch.Logprobs != nil && len(ch.Logprobs.Content) > 0 {
		scored := strings.Contains(strings.ToLower(text), "<score>")
		var sofar strings.Builder
		for _, t := range ch.Logprobs.Content {
			sofar.WriteString(t.Token)
			if scored && !strings.Contains(strings.ToLower(sofar.String()), "<score>") {
				continue // 3.3: the verdict is inside <score>…</score>
			}
			if a := answerWord(t.Token); a != "" {
				return Verdict{P: yesShare(a, t.candidate, t.Top)}, nil
			}
		}
		return Verdict{}, c.notGuard(text)
	}
	switch verdictText(text) {
	case "yes":
		return Verdict{P: 1, FromText: true}, nil
	case "no":
		return Verdict{P: 0, FromText: true}, nil
	}
	return Verdict{}, c.notGuard(text)
}

func (c *Client) notGuard(text string) error {
	model := c.Model
	if model == "" {
		model = "the model"
	}
	return &oneshot.Error{Kind: oneshot.WrongModel, Line: fmt.Sprintf("%s at %s answered %q, not yes or no — is it a guard model (Granite Guardian)?", model, c.BaseURL, oneshot.Short(text))}
}

// answerWord is "yes" or "no" when the token is one, whatever its case
// and spaces.
func answerWord(tok string) string {
	switch w := strings.ToLower(strings.TrimSpace(tok)); w {
	case "yes", "no":
		return w
	}
	return ""
}

// yesShare is P(yes)/(P(yes)+P(no)) over the candidates (every spelling
// of each answer summed); the generated token counts when the server
// listed no candidates.
func yesShare(chosen string, tok candidate, top []candidate) float64 {
	if len(top) == 0 {
		top = []candidate{tok}
	}
	var yes, no float64
	for _, c := range top {
		switch answerWord(c.Token) {
		case "yes":
			yes += math.Exp(c.Logprob)
		case "no":
			no += math.Exp(c.Logprob)
		}
	}
	if yes+no == 0 || math.IsNaN(yes+no) {
		if chosen == "yes" {
			return 1
		}
		return 0
	}
	return yes / (yes + no)
}

var (
	scoreTag  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<score>\s*(yes|no)\s*</score>`) })
	firstWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\W*(\w+)`) })
)

// verdictText reads a verdict from the text alone: 3.3's <score> tag, or
// a first word yes or no (3.1, 3.2).
func verdictText(text string) string {
	if m := scoreTag().FindStringSubmatch(text); m != nil {
		return strings.ToLower(m[1])
	}
	if m := firstWord().FindStringSubmatch(text); m != nil {
		return answerWord(m[1])
	}
	return ""
}
