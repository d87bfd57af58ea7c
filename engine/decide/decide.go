package decide

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/mm-agent/mm/engine/oneshot"
)

// Question types.
const (
	Choice = "choice" // one option of a list
	Noul   = "noul"   // the probability that a statement is true
	Score  = "score"  // the expected level of a scale
)

// Question is one typed question, keyed by its id in a request.
type Question struct {
	Type         string `json:"type"`
	Instructions string `json:"instructions,omitempty"`
	// Criteria: for a choice, option → description (null allowed), kept
	// in Options order when set; for a score, the level descriptions,
	// lowest first; for a noul, optional "true"/"false" descriptions.
	Criteria any `json:"criteria,omitempty"`
}

// Options is a choice's criteria in a fixed order (JSON objects have none,
// but a stable order keeps requests byte-identical from turn to turn).
type Options []Option

// Option is one option of a choice and its description ("" sends null).
type Option struct{ Name, Description string }

// MarshalJSON writes the options as an object, in order.
func (o Options) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, op := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(op.Name)
		b.Write(k)
		b.WriteByte(':')
		if op.Description == "" {
			b.WriteString("null")
		} else {
			v, _ := json.Marshal(op.Description)
			b.Write(v)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Answer is the server's answer to one question.
type Answer struct {
	Type          string             `json:"type"`
	Choice        string             `json:"choice,omitempty"`
	Score         *float64           `json:"score,omitempty"`
	Noul          *float64           `json:"noul,omitempty"`
	Probabilities map[string]float64 `json:"probabilities,omitempty"`
	Legend        map[string]string  `json:"legend,omitempty"`
	Confidence    *float64           `json:"confidence,omitempty"`
}

// Sure is how sure the answer is, read carefully: for a choice the lower
// of the server's confidence (which llama.cpp and Ollama compute
// differently) and the chosen option's probability; for a noul its
// probability; for a score its confidence, else the likeliest level's
// probability.
func (a Answer) Sure() float64 {
	switch a.Type {
	case Choice:
		p, ok := a.Probabilities[a.Choice]
		if a.Confidence != nil && (!ok || *a.Confidence < p) {
			return *a.Confidence
		}
		if ok {
			return p
		}
		return 0
	case Noul:
		if a.Noul != nil {
			return *a.Noul
		}
	case Score:
		if a.Confidence != nil {
			return *a.Confidence
		}
		best := 0.0
		for _, p := range a.Probabilities {
			best = max(best, p)
		}
		return best
	}
	return 0
}

// Response is a whole answer: the answers by question id and the body as
// the server sent it (a decision agent's mm -p prints it as is).
type Response struct {
	Model   string            `json:"model"`
	Answers map[string]Answer `json:"answers"`
	Raw     json.RawMessage   `json:"-"`
}

// Client asks one decision model.
type Client struct {
	// BaseURL is the agent file's, e.g. http://127.0.0.1:8080/v1; the
	// route is /v1/systemone under the server's root.
	BaseURL string
	// Model is sent as the request's model ("" leaves it out: llama-server
	// serves one).
	Model  string
	APIKey string
	// Timeout bounds every call, body included; 0 means 2 s.
	Timeout time.Duration
	// HTTP is the transport; nil uses a plain client.
	HTTP *http.Client
}

// DefaultTimeout is the routing timeout: a warm d1-3B answers in about
// 0.5 s on a GPU, about 2 s on a CPU.
const DefaultTimeout = 2 * time.Second

// Endpoint is the URL of the route.
func (c *Client) Endpoint() string {
	base := strings.TrimRight(c.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	return base + "/v1/systemone"
}

// Ask sends state and the questions and checks the answer: one answer of
// the right type per question, probabilities that sum to one.
func (c *Client) Ask(ctx context.Context, state any, questions map[string]Question) (*Response, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	req := struct {
		Model     string              `json:"model,omitempty"`
		State     any                 `json:"state"`
		Questions map[string]Question `json:"questions"`
	}{c.Model, state, questions}
	status, raw, err := oneshot.Post(ctx, oneshot.Request{URL: c.Endpoint(), APIKey: c.APIKey, Body: req, HTTP: c.HTTP, Limit: 4 << 20,
		Name: "decision", Server: c.BaseURL, Timeout: timeout})
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, c.statusError(status, raw)
	}
	return c.parse(raw, questions)
}

// parse checks a 200 answer against the questions asked.
func (c *Client) parse(raw []byte, questions map[string]Question) (*Response, error) {
	var r Response
	if err := json.Unmarshal(raw, &r); err != nil || r.Answers == nil {
		return nil, &oneshot.Error{Kind: oneshot.Malformed, Line: fmt.Sprintf("the decision server's answer is not a systemone answer (%s)", oneshot.Short(string(raw)))}
	}
	r.Raw = raw
	for id, q := range questions {
		a, ok := r.Answers[id]
		switch {
		case !ok:
			return nil, &oneshot.Error{Kind: oneshot.Malformed, Line: fmt.Sprintf("the decision server's answer has no answer for question %q", id)}
		case a.Type != "" && a.Type != q.Type:
			return nil, &oneshot.Error{Kind: oneshot.Malformed, Line: fmt.Sprintf("the decision server answered question %q as a %s, it was a %s", id, a.Type, q.Type)}
		}
		if a.Type == "" {
			a.Type = q.Type
			r.Answers[id] = a
		}
		if err := check(id, a); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// check validates one answer's numbers.
func check(id string, a Answer) error {
	bad := func(format string, args ...any) error {
		return &oneshot.Error{Kind: oneshot.Malformed, Line: fmt.Sprintf("the decision server's answer to %q is wrong: ", id) + fmt.Sprintf(format, args...)}
	}
	switch a.Type {
	case Choice:
		if a.Choice == "" {
			return bad("no choice")
		}
	case Noul:
		if a.Noul == nil || *a.Noul < 0 || *a.Noul > 1 {
			return bad("noul is not a probability")
		}
	case Score:
		if a.Score == nil {
			return bad("no score")
		}
	}
	if a.Confidence != nil && (*a.Confidence < -1e-9 || *a.Confidence > 1+1e-9 || math.IsNaN(*a.Confidence)) {
		return bad("confidence %g is not between 0 and 1", *a.Confidence)
	}
	if len(a.Probabilities) > 0 {
		sum := 0.0
		for _, p := range a.Probabilities {
			if p < 0 || p > 1 || math.IsNaN(p) {
				return bad("probability %g is not between 0 and 1", p)
			}
			sum += p
		}
		// Rounding may leave the sum a little under one, never over.
		if sum < 0.9 || sum > 1.01 {
			return bad("the probabilities sum to %.2f, not 1", sum)
		}
		if _, ok := a.Probabilities[a.Choice]; a.Type == Choice && !ok {
			return bad("the choice %q has no probability", a.Choice)
		}
	}
	return nil
}
