package engine

import (
	"context"

	"github.com/mm-agent/mm/engine/llm"
)

// Rewrite is what the prompt rewriter made of a user's prompt (skills'
// `$name` and `/name`). The engine knows no skill: the composition
// root gives it the rewriter.
type Rewrite struct {
	// Prompt goes to the model.
	Prompt string
	// Answer, when set, is shown to the user instead of running a turn
	// (a command answered locally, like /skills); history is left alone.
	Answer string
	// Notes are one-line warnings for the user, shown before the turn.
	Notes []string
	// Info are one-line remarks on what was done to the prompt (skill
	// routing's choice, or why it left the prompt alone), shown as
	// progress.
	Info []string
	// Keep, with Answer, records the exchange in history — Prompt as the
	// user's message, Answer as the assistant's — so the model sees it
	// next turn: an answer the user got inside this conversation (another
	// agent's, /ask-<name>) is part of it. The pair keeps roles
	// alternating, which strict chat templates require.
	Keep bool
}

// prepare is the hook point before the first generation of a turn: the
// preGeneration hooks, then the rewriter; the turn may end here without a
// model call.
func (t *turn) prepare(ctx context.Context, prompt string) (string, *TurnEnd) {
	prompt, end := t.preGeneration(ctx, prompt)
	if end != nil {
		return "", end
	}
	rw := t.s.opts.Rewrite
	if rw == nil {
		t.routeTools(ctx, prompt)
		return prompt, nil
	}
	r := rw(ctx, prompt)
	if ctx.Err() != nil { // cancelled while the rewriter waited (/ask-<name>)
		return "", &TurnEnd{Reason: Cancelled}
	}
	for _, n := range r.Notes {
		t.emit(Struggle{Level: Warning, Kind: "skill", Text: n})
	}
	for _, n := range r.Info {
		t.emit(Progress{Text: n})
	}
	if r.Answer != "" {
		t.emit(Text{Text: r.Answer})
		if r.Keep {
			s := t.s
			s.turnStarted(s.append(llm.Message{Role: llm.RoleUser, Content: s.userMessage(r.Prompt)}))
			s.append(llm.Message{Role: llm.RoleAssistant, Content: r.Answer})
		}
		return "", &TurnEnd{Reason: EndTurn}
	}
	t.routeTools(ctx, r.Prompt)
	return r.Prompt, nil
}
