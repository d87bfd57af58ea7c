package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/risk"
)

// newGuard is the guard of agent file a (E37); without a baseURL of its
// own it uses the chat agent's. timeout bounds one request when the file
// sets none.
func newGuard(chat, a *config.Config, timeout time.Duration) *risk.Guard {
	base := a.BaseURL
	if base == "" {
		base = chat.BaseURL
	}
	if base == "" {
		base = "http://127.0.0.1:8080/v1"
	}
	if a.Guard.Timeout > 0 {
		timeout = time.Duration(a.Guard.Timeout)
	}
	g := &risk.Guard{
		Client:    &risk.Client{BaseURL: base, Model: a.Model, APIKey: a.APIKey, Ollama: a.Provider == "ollama", Timeout: timeout},
		Threshold: a.Guard.Threshold,
	}
	for _, r := range a.Guard.Risks {
		g.Risks = append(g.Risks, risk.Risk{Name: r.Name, Definition: r.Definition})
	}
	return g
}

// directTimeout bounds a guard asked directly (mm -p, an editor prompt):
// the first call may wait for the model to load.
const directTimeout = 30 * time.Second

// runGuard is `mm -p` with a guard agent: one JSON object on stdout —
// each risk's probability and flag, and whether any is flagged. The exit
// code says whether there is a verdict (0), not what it is: a hook script
// reads .flagged, and a failure (1, one line on stderr) is never mistaken
// for a flag.
func runGuard(ctx context.Context, cfg *config.Config, prompt string, stdout, stderr io.Writer) int {
	rep, err := newGuard(cfg, cfg, directTimeout).Check(ctx, strings.TrimSpace(prompt))
	if err != nil {
		fmt.Fprintln(stderr, "mm:", guardLine(err))
		return exitFailed
	}
	fmt.Fprintln(stdout, string(rep.JSON()))
	return exitOK
}

// guardRewriter answers every prompt of an editor or REPL session with
// the guard: one line per risk, then the JSON. Nothing enters the
// history.
func guardRewriter(cfg *config.Config) func(context.Context, string) engine.Rewrite {
	g := newGuard(cfg, cfg, directTimeout)
	return func(ctx context.Context, prompt string) engine.Rewrite {
		rep, err := g.Check(ctx, strings.TrimSpace(prompt))
		if err != nil {
			return engine.Rewrite{Answer: "mm: " + guardLine(err)}
		}
		return engine.Rewrite{Answer: rep.Lines() + "\n```json\n" + string(rep.JSON()) + "\n```\n"}
	}
}

func guardLine(err error) string {
	var re *risk.Error
	if errors.As(err, &re) {
		return re.Line
	}
	return err.Error()
}

// guardHookName names a guard entry's file in notes, as the config wrote
// it.
func guardHookName(h config.Hook) string {
	if h.Guard != "" {
		return filepath.ToSlash(h.Guard)
	}
	return "guard"
}
