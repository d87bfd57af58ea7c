package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/decide"
)

// decisionAgent answers prompts with a decision model instead of a chat
// model (E33): the last user message alone is the state — no history, no
// system prompt, no tools — and the answer is the server's JSON.
type decisionAgent struct {
	client    *decide.Client
	questions map[string]decide.Question
	source    string
}

// newDecisionAgent is the agent of a config with a decision: block. Direct
// questions wait longer than routing does (a CPU takes ≈ 2 s).
func newDecisionAgent(cfg *config.Config) *decisionAgent {
	timeout := 30 * time.Second
	if cfg.FirstTokenTime > 0 {
		timeout = time.Duration(cfg.FirstTokenTime)
	}
	d := &decisionAgent{client: decisionClient(cfg, cfg, timeout), questions: map[string]decide.Question{}, source: cfg.Source}
	for id, q := range cfg.Decision.Questions {
		d.questions[id] = decide.Question{Type: q.Type, Instructions: q.Instructions, Criteria: q.Criteria}
	}
	return d
}

// errNoQuestions is the line for a decision agent asked directly without
// questions of its own.
func (d *decisionAgent) errNoQuestions() string {
	return "the decision agent " + d.source + " has no questions (decision: {} is for routing) — add decision.questions, e.g. team: {type: choice, criteria: {billing: refunds, tech: null}}"
}

// ask sends the prompt and returns the server's answer.
func (d *decisionAgent) ask(ctx context.Context, prompt string) (*decide.Response, error) {
	return d.client.Ask(ctx, strings.TrimSpace(prompt), d.questions)
}

// lines is one line per question, in id order: what a person reads
// before the JSON.
func (d *decisionAgent) lines(r *decide.Response) string {
	ids := make([]string, 0, len(d.questions))
	for id := range d.questions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for _, id := range ids {
		a := r.Answers[id]
		switch a.Type {
		case decide.Choice:
			fmt.Fprintf(&b, "%s: %s (%.2f)\n", id, a.Choice, a.Sure())
		case decide.Score:
			level := a.Legend[fmt.Sprint(int(*a.Score+0.5))]
			fmt.Fprintf(&b, "%s: %.2f %s(%.2f)\n", id, *a.Score, parens(level), a.Sure())
		case decide.Noul:
			fmt.Fprintf(&b, "%s: %.2f\n", id, *a.Noul)
		}
	}
	return b.String()
}

func parens(s string) string {
	if s == "" {
		return ""
	}
	return s + " "
}

// runDecision is `mm -p` with a decision agent: the server's JSON as is on
// stdout (a field a server adds later still reaches the script).
func runDecision(ctx context.Context, d *decisionAgent, prompt string, stdout, stderr io.Writer) int {
	if len(d.questions) == 0 {
		fmt.Fprintln(stderr, "mm:", d.errNoQuestions())
		return exitUsage
	}
	r, err := d.ask(ctx, prompt)
	if err != nil {
		fmt.Fprintln(stderr, "mm:", err)
		return exitFailed
	}
	raw := strings.TrimRight(string(r.Raw), "\n")
	fmt.Fprintln(stdout, raw)
	return exitOK
}

// rewriter answers every prompt of an editor session locally: one line
// per question, then the JSON. Nothing enters the history.
func (d *decisionAgent) rewriter() func(context.Context, string) engine.Rewrite {
	return func(ctx context.Context, prompt string) engine.Rewrite {
		if len(d.questions) == 0 {
			return engine.Rewrite{Answer: d.errNoQuestions()}
		}
		r, err := d.ask(ctx, prompt)
		if err != nil {
			return engine.Rewrite{Answer: "mm: " + err.Error()}
		}
		return engine.Rewrite{Answer: d.lines(r) + "\n```json\n" + strings.TrimSpace(string(r.Raw)) + "\n```\n"}
	}
}
