package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mm-agent/mm/cmd/mm/config"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/bash"
	"github.com/mm-agent/mm/tools/files"
	"github.com/mm-agent/mm/tools/lsptool"
	"github.com/mm-agent/mm/tools/plan"
	"github.com/mm-agent/mm/tools/workspace"
)

// app is the composition root: it turns the config into a model client,
// a tool registry and engine sessions, for both front ends.
type app struct {
	cfg *config.Config
	log *slog.Logger

	mu       sync.Mutex
	client   *llm.Client
	model    string
	window   int
	winProbe time.Time
	lsp      map[string]*lspbridge.Manager // by workspace

	// notice shows a one-time line to the user (line mode's banner on
	// stderr); nil logs it only.
	notice func(string)
}

func newApp(cfg *config.Config, log *slog.Logger) *app {
	return &app{cfg: cfg, log: log, model: cfg.Model, window: cfg.ContextWindow}
}

// errNoServer is C7's one line when no model server answers.
type errNoServer struct{ tried string }

func (e errNoServer) Error() string {
	return "no model server answered (" + e.tried + ") — start one, e.g. `llama-server -hf unsloth/Qwen3-4B-GGUF --jinja --port 8080`, or set baseURL in .mm/agent.yaml (or MM_BASE_URL)"
}

// explain turns a model error into the one line the user sees.
func explain(err error) string {
	var ns errNoServer
	if errors.As(err, &ns) {
		return ns.Error()
	}
	return llm.Explain(err)
}

// connect returns the model client, finding the server when none is
// configured (C7). It is retried at each call until it succeeds, so a
// server started after mm is found.
func (a *app) connect(ctx context.Context) (*llm.Client, string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client != nil && a.model != "" {
		return a.client, a.model, nil
	}
	if a.client == nil {
		provider, base := a.cfg.Provider, a.cfg.BaseURL
		if base == "" {
			p, b, err := llm.Detect(ctx, nil)
			if err != nil {
				return nil, "", errNoServer{tried: "127.0.0.1 ports 8080 llama-server, 11434 Ollama, 12434 Docker Model Runner, 1234 LM Studio"}
			}
			if provider == "" {
				provider = p
			}
			base = b
			a.log.Info("model server found", "provider", provider, "baseURL", base)
			if a.notice != nil {
				a.notice(fmt.Sprintf("mm: found %s at %s (set baseURL to choose another)", p, base))
			}
		}
		if provider == "" {
			provider = guessProvider(base)
		}
		a.client = llm.New(llm.Options{
			Provider:          provider,
			BaseURL:           base,
			APIKey:            a.cfg.APIKey,
			FirstTokenTimeout: time.Duration(a.cfg.FirstTokenTime),
			IdleTimeout:       time.Duration(a.cfg.WatchdogTimeout),
			Logger:            a.log,
		})
	}
	if a.model == "" {
		models, err := a.client.Models(ctx)
		if err != nil {
			return nil, "", err
		}
		if len(models) == 0 {
			return nil, "", fmt.Errorf("the server at %s serves no model; set model in .mm/agent.yaml", a.client.BaseURL())
		}
		a.model = models[0]
		a.log.Info("model chosen", "model", a.model)
	}
	return a.client, a.model, nil
}

// guessProvider names the server from its usual port when the config
// gives a URL but no provider.
func guessProvider(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return "openai"
	}
	switch u.Port() {
	case "8080":
		return "llamacpp"
	case "11434":
		return "ollama"
	case "12434":
		return "dmr"
	case "1234":
		return "lmstudio"
	case "8000":
		return "vllm"
	}
	return "openai"
}

// Stream implements engine.Model, connecting on first use.
func (a *app) Stream(ctx context.Context, req llm.Request, on func(llm.Delta) error) (llm.Response, error) {
	c, model, err := a.connect(ctx)
	if err != nil {
		return llm.Response{}, err
	}
	if req.Model == "" {
		req.Model = model
	}
	return c.Stream(ctx, req, on)
}

// contextWindow is the configured window, else the server's (probed at
// most every 30 s until known: the server may start after mm).
func (a *app) contextWindow(ctx context.Context) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.window > 0 || a.client == nil || time.Since(a.winProbe) < 30*time.Second {
		return a.window
	}
	a.winProbe = time.Now()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	n, source, err := a.client.ContextWindow(ctx, a.model)
	if err != nil {
		a.log.Warn("context window unknown; set contextWindow in the config", "err", err)
		return 0
	}
	a.log.Info("context window", "tokens", n, "source", source)
	a.window = n
	return n
}

// workspace builds the disk environment and permission policy of a
// session in cwd. ask is nil in ACP mode (the acp package asks).
func (a *app) workspace(cwd string, ask workspace.Asker) (*workspace.Workspace, *tools.Policy, error) {
	policy := tools.NewPolicy(a.cfg.Yolo, a.cfg.Permissions.Allow, a.cfg.Permissions.Deny)
	ws, err := workspace.New(workspace.Options{Cwd: cwd, Policy: policy, Ask: ask})
	return ws, policy, err
}

// registry is the one table of tools offered to the model (T2): a tool
// is declared only when it can serve.
func (a *app) registry(cwd string) *tools.Registry {
	maxTokens := a.cfg.Sampling.MaxTokens
	if maxTokens == 0 {
		maxTokens = 4096
	}
	servers := a.lspFor(cwd)
	var ts []tools.Tool
	fileTools := files.New(files.Options{MaxOutput: a.maxOutput(), MaxTokens: maxTokens, Diagnostics: lsptool.EditHook{Manager: servers}})
	if config.On(a.cfg.EditTools, true) {
		ts = append(ts, fileTools...)
	} else {
		ts = append(ts, fileTools[0]) // read_file only
	}
	if config.On(a.cfg.BashTool, true) {
		var b tools.Tool = bash.New(bash.Options{Timeout: time.Duration(a.cfg.BashTimeout), MaxOutput: a.maxOutput(), Environ: os.Environ(), Env: a.bashEnv()})
		if servers.Available() {
			b = afterCommands{Tool: b, m: servers}
		}
		ts = append(ts, b)
	}
	if servers.Available() {
		ts = append(ts, lsptool.New(lsptool.Options{Manager: servers}))
	}
	if config.On(a.cfg.PlanTool, true) {
		ts = append(ts, plan.New())
	}
	return tools.NewRegistry(ts...)
}

// bashEnv is the environment policy of bash commands (issue 9): the
// config's bashEnv, and the API key never, under whatever name.
func (a *app) bashEnv() bash.EnvPolicy {
	drop := append([]string{"MM_API_KEY"}, a.cfg.BashEnv.Drop...)
	if a.cfg.APIKeyEnv != "" {
		drop = append(drop, a.cfg.APIKeyEnv)
	}
	return bash.EnvPolicy{Keep: a.cfg.BashEnv.Keep, Drop: drop, Secrets: []string{a.cfg.APIKey}}
}

// maxOutput is E25: explicit config, else 15 % of the window × 3.5
// characters per token clamped to [2,000, 16,000], else 16,000.
func (a *app) maxOutput() int {
	if a.cfg.MaxOutput > 0 {
		return a.cfg.MaxOutput
	}
	if a.cfg.ContextWindow > 0 {
		return min(max(int(float64(a.cfg.ContextWindow)*0.15*3.5), 2000), 16000)
	}
	return 16000
}

// session builds an engine session whose tools run in env.
func (a *app) session(cwd string, env tools.Env) *engine.Session {
	s := a.cfg.Sampling
	temp, topP, parallel := 0.0, 0.9, false
	if s.Temperature == nil {
		s.Temperature = &temp
	}
	if s.TopP == nil {
		s.TopP = &topP
	}
	if s.ParallelToolCalls == nil {
		s.ParallelToolCalls = &parallel
	}
	if s.MaxTokens == 0 {
		s.MaxTokens = 4096
	}
	return engine.NewSession(engine.Options{
		Model:           a,
		ModelName:       "", // filled by Stream once the server is known
		Tools:           a.registry(cwd),
		Env:             env,
		SystemPrompt:    a.cfg.SystemPrompt,
		ProjectContext:  projectContext(cwd),
		Sampling:        llm.Sampling{Temperature: s.Temperature, TopP: s.TopP, MaxTokens: s.MaxTokens, ParallelToolCalls: s.ParallelToolCalls},
		ReasoningEffort: a.cfg.Reasoning.Effort,
		MaxTurns:        a.cfg.MaxTurns,
		PreviewLines:    a.cfg.PreviewLines,
		ContextWindow:   a.contextWindow,
		ToolBudget:      int(a.cfg.ToolBudget),

		AdaptiveTemperature: a.cfg.AdaptiveTemp,
		Explain:             explain,
		Logger:              a.log,
	})
}

// projectContext reads AGENTS.md, else CLAUDE.md, at the workspace root.
func projectContext(cwd string) string {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		if b, err := os.ReadFile(filepath.Join(cwd, name)); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}
