package app

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/engine/oneshot"
	"github.com/mm-agent/mm/engine/risk"
)

// This file turns the config's classifier agents — decision agents
// and the routers they serve, guard agents — into the
// engine's plain options; what they do lives in engine/decide and
// engine/risk.

// serverOf is the base URL agent file a talks to: its own, else the chat
// agent's, else a local llama-server's default.
func serverOf(chat, a *config.Config) string {
	switch {
	case a.BaseURL != "":
		return a.BaseURL
	case chat.BaseURL != "":
		return chat.BaseURL
	}
	return "http://127.0.0.1:8080/v1"
}

// decisionClient talks to the decision model of agent file a.
func decisionClient(chat, a *config.Config, timeout time.Duration) *decide.Client {
	return &decide.Client{BaseURL: serverOf(chat, a), Model: a.Model, APIKey: a.APIKey, Timeout: timeout}
}

// router is the skill or tool router a routing block names; nil when it
// names no agent.
func router(chat, file *config.Config, timeout config.Duration, threshold *float64) *decide.Router {
	if file == nil {
		return nil
	}
	return &decide.Router{Client: decisionClient(chat, file, time.Duration(timeout)), Threshold: threshold}
}

func skillRouter(cfg *config.Config) *decide.Router {
	r := cfg.SkillRouting
	return router(cfg, r.File, r.Timeout, r.MinConfidence)
}

func toolRouter(cfg *config.Config) *decide.Router {
	r := cfg.ToolRouting
	return router(cfg, r.File, r.Timeout, r.DropBelow)
}

// decisionAgent is the agent of a config with a decision: block. Direct
// questions wait longer than routing does (a CPU takes ≈ 2 s).
func decisionAgent(cfg *config.Config) *decide.Agent {
	timeout := 30 * time.Second
	if cfg.FirstTokenTime > 0 {
		timeout = time.Duration(cfg.FirstTokenTime)
	}
	d := &decide.Agent{Client: decisionClient(cfg, cfg, timeout), Questions: map[string]decide.Question{}, Source: cfg.Source}
	for id, q := range cfg.Decision.Questions {
		d.Questions[id] = decide.Question{Type: q.Type, Instructions: q.Instructions, Criteria: q.Criteria}
	}
	return d
}

// runDecision is `mm -p` with a decision agent: the server's JSON as is on
// stdout (a field a server adds later still reaches the script).
func runDecision(ctx context.Context, d *decide.Agent, prompt string, stdout, stderr io.Writer) int {
	if len(d.Questions) == 0 {
		fmt.Fprintln(stderr, "mm:", d.NoQuestions())
		return exitcode.Usage
	}
	r, err := d.Ask(ctx, prompt)
	if err != nil {
		fmt.Fprintln(stderr, "mm:", err)
		return exitcode.Failed
	}
	fmt.Fprintln(stdout, strings.TrimRight(string(r.Raw), "\n"))
	return exitcode.OK
}

// guardAgent is the guard of agent file a; timeout bounds one request
// when the file sets none.
func guardAgent(chat, a *config.Config, timeout time.Duration) *risk.Guard {
	if a.Guard.Timeout > 0 {
		timeout = time.Duration(a.Guard.Timeout)
	}
	g := &risk.Guard{
		Client:    &risk.Client{BaseURL: serverOf(chat, a), Model: a.Model, APIKey: a.APIKey, Ollama: a.Provider == "ollama", Timeout: timeout},
		Threshold: a.Guard.Threshold,
	}
	for _, r := range a.Guard.Risks {
		g.Risks = append(g.Risks, risk.Risk{Name: r.Name, Definition: r.Definition})
	}
	return g
}

// runGuard is `mm -p` with a guard agent: one JSON object on stdout —
// each risk's probability and flag, and whether any is flagged. The exit
// code says whether there is a verdict (0), not what it is: a hook script
// reads .flagged, and a failure (1, one line on stderr) is never mistaken
// for a flag.
func runGuard(ctx context.Context, cfg *config.Config, prompt string, stdout, stderr io.Writer) int {
	rep, err := guardAgent(cfg, cfg, risk.DirectTimeout).Check(ctx, strings.TrimSpace(prompt))
	if err != nil {
		fmt.Fprintln(stderr, "mm:", oneshot.Line(err))
		return exitcode.Failed
	}
	fmt.Fprintln(stdout, string(rep.JSON()))
	return exitcode.OK
}

// guardHookName names a guard entry's file in notes, as the config wrote
// it.
func guardHookName(h config.Hook) string {
	if h.Guard != "" {
		return filepath.ToSlash(h.Guard)
	}
	return "guard"
}
