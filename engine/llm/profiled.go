package llm

import (
	"context"
	"log/slog"
	"sync"
)

// Profiled is a connector whose requests have their unset sampling fields
// filled from the model family's profile, then from mm's defaults.
// The profile is the one named, else guessed from the served model's id
// once the server named it; the choice is said in the log, because a
// guess is what a user checks first when answers change with a model.
type Profiled struct {
	conn  *Connector
	named string // "" guesses, "none" uses none
	log   *slog.Logger

	mu     sync.Mutex
	model  string // the model the profile below was chosen for
	chosen Profile
}

// NewProfiled wraps conn. profile is the configured profile's name: ""
// guesses it from the model id, "none" uses mm's defaults alone. A nil
// log logs nothing.
func NewProfiled(conn *Connector, profile string, log *slog.Logger) *Profiled {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Profiled{conn: conn, named: profile, log: log}
}

// Defaults are mm's own sampling defaults, the last to fill a request:
// near-greedy and one tool call at a time, which a small model produces
// correctly more often.
func Defaults(maxTokens int) Sampling {
	temp, topP, parallel := 0.0, 0.9, false
	return Sampling{Temperature: &temp, TopP: &topP, MaxTokens: maxTokens, ParallelToolCalls: &parallel}
}

// Stream sends req through the connector with its sampling filled.
func (p *Profiled) Stream(ctx context.Context, req Request, on func(Delta) error) (Response, error) {
	_, model, err := p.conn.Client(ctx)
	if err != nil {
		return Response{}, err
	}
	if req.Model == "" {
		req.Model = model
	}
	prof := p.profile(req.Model)
	req.Sampling = prof.Fill(req.Sampling, Defaults(req.Sampling.MaxTokens))
	return p.conn.Stream(ctx, req, on)
}

// profile chooses the profile of model, once per model: the served model
// may change when the server is switched.
func (p *Profiled) profile(model string) Profile {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.model == model {
		return p.chosen
	}
	p.model = model
	switch prof, ok := LookupProfile(p.named); {
	case p.named == "none":
		p.chosen = Profile{}
	case ok:
		p.chosen = prof
		p.log.Info("profile", "profile", prof.Name, "source", "config")
	default:
		prof, ok = GuessProfile(model)
		p.chosen = prof
		if ok {
			p.log.Info("profile guessed from the model id", "profile", prof.Name, "model", model)
		} else {
			p.log.Info("no profile for this model: mm's sampling defaults", "model", model, "known", ProfileNames())
		}
	}
	return p.chosen
}

// KeepReasoning is the chosen profile's reasoning handling: whether the
// model needs its reasoning sent back with tool-call turns. False
// before the first request named the model.
func (p *Profiled) KeepReasoning() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.chosen.KeepReasoning
}
