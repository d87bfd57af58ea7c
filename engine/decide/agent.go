package decide

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Agent answers prompts with a decision model instead of a chat model:
// the prompt alone is the state — no history, no system prompt, no
// tools — and the answer is the server's JSON, so that a script reads
// every field the server sends, even one added later.
type Agent struct {
	Client    *Client
	Questions map[string]Question
	// Source names the agent file in messages.
	Source string
}

// NoQuestions is the line for an agent asked directly without questions
// of its own: a decision: block without questions is only for routing.
func (a *Agent) NoQuestions() string {
	return "the decision agent " + a.Source + " has no questions (decision: {} is for routing) — add decision.questions, e.g. team: {type: choice, criteria: {billing: refunds, tech: null}}"
}

// Ask sends the prompt and returns the server's answer.
func (a *Agent) Ask(ctx context.Context, prompt string) (*Response, error) {
	return a.Client.Ask(ctx, strings.TrimSpace(prompt), a.Questions)
}

// Lines is one line per question, in id order: what a person reads
// before the JSON.
func (a *Agent) Lines(r *Response) string {
	ids := make([]string, 0, len(a.Questions))
	for id := range a.Questions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		ans := r.Answers[id]
		switch ans.Type {
		case Choice:
			fmt.Fprintf(&b, "%s: %s (%.2f)\n", id, ans.Choice, ans.Sure())
		case Score:
			level := ans.Legend[fmt.Sprint(int(*ans.Score+0.5))]
			if level != "" {
				level += " "
			}
			fmt.Fprintf(&b, "%s: %.2f %s(%.2f)\n", id, *ans.Score, level, ans.Sure())
		case Noul:
			fmt.Fprintf(&b, "%s: %.2f\n", id, *ans.Noul)
		}
	}
	return b.String()
}

// Answer is what a chat front end shows for prompt: one line per
// question, then the JSON; or the one line saying why there is none.
// Nothing of it enters a session's history.
func (a *Agent) Answer(ctx context.Context, prompt string) string {
	if len(a.Questions) == 0 {
		return a.NoQuestions()
	}
	r, err := a.Ask(ctx, prompt)
	if err != nil {
		return "mm: " + err.Error()
	}
	return a.Lines(r) + "\n```json\n" + strings.TrimSpace(string(r.Raw)) + "\n```\n"
}
