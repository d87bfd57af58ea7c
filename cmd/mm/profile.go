package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mm-agent/mm/engine/llm"
)

// profiled is the engine's Model: the connector, with each request's
// unset sampling fields filled from the model family's profile (E30), then
// from mm's defaults. The profile is the config's `profile:`, else guessed
// from the served model's id once the server named it (said in the log).
type profiled struct {
	conn   *llm.Connector
	named  string // the config's profile: "" guesses, "none" uses none
	log    *slog.Logger
	mu     sync.Mutex
	model  string // the model the profile below was chosen for
	chosen llm.Profile
}

// defaults are mm's own sampling defaults: greedy-ish and one tool call at
// a time, simpler for a small model to produce correctly.
func defaults(maxTokens int) llm.Sampling {
	temp, topP, parallel := 0.0, 0.9, false
	return llm.Sampling{Temperature: &temp, TopP: &topP, MaxTokens: maxTokens, ParallelToolCalls: &parallel}
}

// Stream implements engine.Model.
func (p *profiled) Stream(ctx context.Context, req llm.Request, on func(llm.Delta) error) (llm.Response, error) {
	_, model, err := p.conn.Client(ctx)
	if err != nil {
		return llm.Response{}, err
	}
	if req.Model == "" {
		req.Model = model
	}
	prof := p.profile(req.Model)
	req.Sampling = prof.Fill(req.Sampling, defaults(req.Sampling.MaxTokens))
	return p.conn.Stream(ctx, req, on)
}

// profile chooses (once per model) the profile of model.
func (p *profiled) profile(model string) llm.Profile {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.model == model {
		return p.chosen
	}
	p.model = model
	switch prof, ok := llm.LookupProfile(p.named); {
	case p.named == "none":
		p.chosen = llm.Profile{}
	case ok:
		p.chosen = prof
		p.log.Info("profile", "profile", prof.Name, "source", "config")
	default:
		prof, ok = llm.GuessProfile(model)
		p.chosen = prof
		if ok {
			p.log.Info("profile guessed from the model id", "profile", prof.Name, "model", model)
		} else {
			p.log.Info("no profile for this model: mm's sampling defaults", "model", model, "known", llm.ProfileNames())
		}
	}
	return p.chosen
}

// keepReasoning is the chosen profile's reasoning handling (E7), for the
// engine; false before the first request named the model.
func (p *profiled) keepReasoning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chosen.KeepReasoning
}
