package decide

import (
	"context"

	"github.com/mm-agent/mm/engine/oneshot"
)

// None is the option a routing question always offers: no option applies.
const None = "none"

// Routed is the answer to a routing question.
type Routed struct {
	// Choice is the option chosen, None when none applies.
	Choice string
	// Sure is Answer.Sure of the choice.
	Sure float64
}

// Route asks which option applies to the request (one choice question,
// id "route", with None added last). The options' order is kept, so the
// same options make the same request.
func (c *Client) Route(ctx context.Context, request, instructions string, opts Options) (Routed, error) {
	q := Question{Type: Choice, Instructions: instructions, Criteria: append(opts[:len(opts):len(opts)], Option{None, "none of the above applies"})}
	r, err := c.Ask(ctx, request, map[string]Question{"route": q})
	if err != nil {
		return Routed{}, err
	}
	a := r.Answers["route"]
	known := a.Choice == None
	for _, o := range opts {
		known = known || o.Name == a.Choice
	}
	if !known {
		return Routed{}, &oneshot.Error{Kind: oneshot.Malformed, Line: "the decision server chose " + quote(a.Choice) + ", which was not an option"}
	}
	return Routed{Choice: a.Choice, Sure: a.Sure()}, nil
}

// Relevant asks, for each group, whether it is needed for the request (one
// noul question per group, keyed by the group's name) and returns P(true)
// by group.
func (c *Client) Relevant(ctx context.Context, request string, groups Options) (map[string]float64, error) {
	qs := map[string]Question{}
	for _, g := range groups {
		qs[g.Name] = Question{Type: Noul, Instructions: "Is this needed to carry out the request: " + g.Description + "?",
			Criteria: map[string]string{"true": "the request needs it", "false": "the request can be done without it"}}
	}
	r, err := c.Ask(ctx, request, qs)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, g := range groups {
		out[g.Name] = *r.Answers[g.Name].Noul
	}
	return out, nil
}

func quote(s string) string { return "\"" + s + "\"" }
