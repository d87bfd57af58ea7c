package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mm-agent/mm/cmd/mm/config"
	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/skills"
)

// routingInstructions is the skill routing question (E34); the criteria
// are the skills' descriptions, the same the chat model reads.
const routingInstructions = "Which skill should the assistant use to carry out this request? Answer none when no skill clearly applies."

// skillRouter asks a decision agent, before a chat turn, which skill the
// prompt calls for (E34). It proposes; the chat model acts: a choice only
// adds the line `$skill` would, and read_skill stays the chat model's own
// call, in the open.
type skillRouter struct {
	client *decide.Client
	min    float64
}

// newSkillRouter is nil when skillRouting names no agent.
func newSkillRouter(cfg *config.Config) *skillRouter {
	r := cfg.SkillRouting
	if r.File == nil {
		return nil
	}
	min := 0.6
	if r.MinConfidence != nil {
		min = *r.MinConfidence
	}
	return &skillRouter{client: decisionClient(cfg, r.File, time.Duration(r.Timeout)), min: min}
}

// decisionClient talks to the server of agent file a; without a baseURL
// of its own it uses the chat agent's.
func decisionClient(chat, a *config.Config, timeout time.Duration) *decide.Client {
	base := a.BaseURL
	if base == "" {
		base = chat.BaseURL
	}
	if base == "" {
		base = "http://127.0.0.1:8080/v1"
	}
	return &decide.Client{BaseURL: base, Model: a.Model, APIKey: a.APIKey, Timeout: timeout}
}

// route returns the prompt with the chosen skill's line added, and the 🧭
// line saying what happened; it never fails: any trouble leaves the
// prompt as it is and says why.
func (r *skillRouter) route(ctx context.Context, prompt string, set *skills.Set) (string, string) {
	if len(set.All()) == 0 {
		return prompt, ""
	}
	got, err := r.choose(ctx, prompt, set)
	var de *decide.Error
	switch {
	case errors.As(err, &de) && de.Kind == decide.Cancelled:
		return prompt, ""
	case err != nil:
		return prompt, "🧭 skill routing skipped: " + err.Error() + " — the prompt goes as written"
	case got.Choice == decide.None:
		return prompt, fmt.Sprintf("🧭 no skill applies (%.2f)", got.Sure)
	case got.Sure < r.min:
		return prompt, fmt.Sprintf("🧭 no skill routed: %s at %.2f is below minConfidence %.2f", got.Choice, got.Sure, r.min)
	}
	return strings.TrimRight(prompt, "\n") + "\n\n" + skills.Line(got.Choice, ""), fmt.Sprintf("🧭 skill %s (%.2f)", got.Choice, got.Sure)
}

// choose asks the routing question over the skills of set.
func (r *skillRouter) choose(ctx context.Context, prompt string, set *skills.Set) (decide.Routed, error) {
	var opts decide.Options
	for _, sk := range set.All() {
		opts = append(opts, decide.Option{Name: sk.Name, Description: sk.Description})
	}
	return r.client.Route(ctx, prompt, routingInstructions, opts)
}
