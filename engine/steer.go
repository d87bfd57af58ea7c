package engine

import (
	"context"
	"strings"
	"sync"

	"github.com/mm-agent/mm/engine/llm"
)

// Inbox carries what the user sends while a turn runs (steering): a
// correction for a small model heading the wrong way, read before its
// next call instead of after the turn. A front end makes one per turn,
// puts into it from any goroutine, and hands it to RunSteered. A nil
// Inbox takes nothing.
type Inbox struct {
	mu     sync.Mutex
	texts  []string
	closed bool
}

// Put queues text for the turn's next model call. It reports false once
// the turn has ended or decided to end: the text was not taken, and is
// the user's to send as a prompt of its own.
func (b *Inbox) Put(text string) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.texts = append(b.texts, text)
	return true
}

// Close ends the inbox and returns what was put and never taken.
func (b *Inbox) Close() []string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	left := b.texts
	b.texts = nil
	return left
}

// take returns what was put since the last take.
func (b *Inbox) take() []string {
	return b.takeOr(false)
}

// takeOrClose is take at the point where the turn would end: when
// nothing waits, the inbox closes in the same step, so a message is
// either taken by this turn or refused by Put — never lost between.
func (b *Inbox) takeOrClose() []string {
	return b.takeOr(true)
}

func (b *Inbox) takeOr(closeIfEmpty bool) []string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	texts := b.texts
	b.texts = nil
	if len(texts) == 0 && closeIfEmpty {
		b.closed = true
	}
	return texts
}

// steer adds what the user sent since the last model call to the
// conversation.
func (t *turn) steer(ctx context.Context) {
	t.add(t.pass(ctx, t.in.take()))
}

// steerAtEnd is the turn's last look at its inbox before answering g
// ends it: when the user sent something meanwhile, g is kept as the
// assistant's message, the user's follows, and the turn goes on.
func (t *turn) steerAtEnd(ctx context.Context, g generation) bool {
	texts := t.pass(ctx, t.in.takeOrClose())
	if len(texts) == 0 {
		return false
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: g.content}
	if t.s.keepReasoning() {
		msg.Reasoning = g.resp.Reasoning
	}
	t.s.append(msg)
	t.add(texts)
	return true
}

// pass puts each text through the preGeneration hooks, as a prompt is,
// and returns what they let through, as they rewrote it. A hook's stop
// drops that message only, with a note.
func (t *turn) pass(ctx context.Context, texts []string) []string {
	var out []string
	for _, text := range texts {
		r := t.s.opts.Hooks.PreGeneration(ctx, t.s.opts.ID, text)
		t.hookWarnings(r.Warnings)
		if r.Stop {
			t.emit(Struggle{Level: Warning, Kind: KindHook, Text: "your message sent during the turn was stopped by a hook: " + r.Reason})
			continue
		}
		if r.Prompt != "" {
			text = r.Prompt
		}
		out = append(out, text)
	}
	return out
}

// add appends each text as a user message, shown to the user as
// steering.
func (t *turn) add(texts []string) {
	for _, text := range texts {
		t.s.append(llm.Message{Role: llm.RoleUser, Content: t.s.userMessage(text)})
		t.emit(Steered{Text: text})
	}
}

// dropped tells the user that what they sent during a turn that ended
// otherwise (a failure, the step limit) never reached the model; after a
// cancel the user knows.
func (t *turn) dropped(end TurnEnd, left []string) {
	if len(left) == 0 || end.Reason == Cancelled {
		return
	}
	first, _, _ := strings.Cut(strings.TrimSpace(left[0]), "\n")
	t.emit(Struggle{Level: Warning, Kind: KindSteer, Text: "the turn ended before your message reached the model (" + first + ") — send it again as a prompt"})
}

// KindSteer marks the note about a message sent during a turn that the
// model never read.
const KindSteer = "steer"
