package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/agents"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/compact"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/risk"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/fileedit/disk"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/permit/answers"
	"github.com/mm-agent/mm/permit/childenv"
	"github.com/mm-agent/mm/permit/confine"
	"github.com/mm-agent/mm/permit/runlater"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/bash"
	"github.com/mm-agent/mm/tools/fetch"
	"github.com/mm-agent/mm/tools/files"
	"github.com/mm-agent/mm/tools/lsptool"
	"github.com/mm-agent/mm/tools/plan"
	"github.com/mm-agent/mm/tools/skilltool"
	"github.com/mm-agent/mm/tools/workspace"
)

// App is the composition root: it turns the config into a model
// connector, a tool registry and engine sessions, for both front ends.
type App struct {
	cfg *config.Config
	// env is the environment mm was started with: what the programs it
	// starts get, filtered by childEnv.
	env  config.Env
	log  *slog.Logger
	conn *llm.Connector
	// store keeps sessions in the state directory, answers the
	// remembered answers beside them; nil keeps nothing (no home
	// directory).
	store   *store.Store
	answers *answers.Store
	// model is the connector with the profile's sampling.
	model *llm.Profiled

	mu     sync.Mutex
	lsp    map[string]*lspbridge.Manager // by workspace
	views  map[string]*sessionFiles      // by workspace
	skills skillLibs
	// lspCold leaves language servers unstarted (mm doctor only looks at
	// the tools they add).
	lspCold bool

	// sandbox confines bash commands (sandbox: on, namespaces,
	// landlock), or refuses them when it cannot; nil when off.
	sandbox *confine.Sandbox
	// known are the secrets learned from later readings of the config
	// (ACP); nil in the other front ends, which read it once.
	known *childenv.Secrets

	// notice shows a one-time line to the user (line mode's banner on
	// stderr); nil logs it only. Set before the first session.
	notice func(string)

	// agents are the config's other agents; parent is the app that
	// asks, in an asked agent's own app.
	agents    agents.Set
	agentApps []*App // the asked agents' own apps, closed with this one
	parent    *App

	// ver is what mm says it is to MCP servers and in line mode; an
	// asked agent's app says its parent's.
	ver string

	// trust is the workspace config's trust state (mm doctor, /trust).
	trust *config.Trust
}

// Options is what an App is built from.
type Options struct {
	Config *config.Config
	// Trust is the workspace config's trust state, as config.LoadFor
	// gave it with Config; nil has no workspace config to trust (mm eval).
	Trust *config.Trust
	// Env is the environment mm was started with, its secrets included.
	Env config.Env
	Log *slog.Logger
	// Store keeps sessions and remembered answers; nil keeps nothing.
	Store *store.Store
	// Version is what mm says it is to MCP servers and in line mode.
	Version string
	// LSPCold leaves language servers unstarted: a command that only
	// looks at the tools they add (mm doctor, mm eval).
	LSPCold bool
	// Known are the secrets of every reading of the config, when it is
	// read again while mm runs (ACP); nil: read once.
	Known *childenv.Secrets
}

// New builds the app of o.Config: its connector, sandbox and asked
// agents. The caller calls Close.
func New(o Options) *App { return build(o, nil) }

// build is New for the app of an agent that parent asks (nil: mm's own).
func build(o Options, parent *App) *App {
	a := &App{cfg: o.Config, env: o.Env, log: o.Log, store: o.Store, trust: o.Trust,
		ver: o.Version, lspCold: o.LSPCold, known: o.Known, parent: parent}
	a.sandbox = a.newSandbox()
	if o.Store != nil {
		a.answers = answers.Open(o.Store.AnswersFile, o.Log)
	}
	cfg := o.Config
	a.conn = llm.NewConnector(llm.ConnectorOptions{
		Provider:          cfg.Provider,
		BaseURL:           cfg.BaseURL,
		APIKey:            cfg.APIKey,
		Model:             cfg.Model,
		ContextWindow:     cfg.ContextWindow,
		FirstTokenTimeout: time.Duration(cfg.FirstTokenTime),
		IdleTimeout:       time.Duration(cfg.WatchdogTimeout),
		Notice: func(line string) {
			if a.notice != nil {
				a.notice(line)
			}
		},
		Logger: o.Log,
	})
	a.model = llm.NewProfiled(a.conn, cfg.Profile, o.Log)
	a.agents, a.agentApps = newAskedAgents(a)
	return a
}

// Close stops what a started: its asked agents' connectors, its
// sandbox, its connector and its language servers.
func (a *App) Close() {
	a.closeAgents()
	a.sandbox.Close()
	a.conn.Close()
	a.closeLSP()
}

// version is what a says it is (an asked agent's app: its parent's).
func (a *App) version() string {
	if a.parent != nil {
		return a.parent.version()
	}
	return a.ver
}

// explain turns a model error into the one line the user sees.
func explain(err error) string { return llm.Explain(err) }

// Workspace builds the disk environment and permission policy of a
// session in cwd, whose other roots are dirs (ACP additionalDirectories:
// absolute directories; relative paths stay relative to cwd). ask is nil
// in ACP mode (the acp package asks).
//
// Every root is confined and watched on its own: its files that run
// later are asked about like cwd's, and a link in one root is judged by
// what it leads to in any other. A root brings its files, never its
// configuration: mm's config is cwd's, so another root's .mm/ is not
// trusted because cwd's is — it is not read at all.
//
// "Always" answers given in earlier sessions of the workspace come back
// from the state directory, and new ones go there — never into a
// file of the repository, which a cloned project could ship.
func (a *App) Workspace(cwd string, dirs []string, ask permit.Asker) (*workspace.Workspace, *permit.Policy, error) {
	policy := permit.NewPolicy(a.cfg.Yolo, a.cfg.Permissions.Allow, a.cfg.Permissions.Deny)
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, policy, fmt.Errorf("workspace %s: %w", cwd, err)
	}
	roots, err := workspaceRoots(abs, dirs)
	if err != nil {
		return nil, policy, err
	}
	ws, err := workspace.New(workspace.Options{Cwd: abs, Roots: roots, Policy: policy, Ask: ask})
	if err != nil {
		return ws, policy, err
	}
	root := ws.Cwd()
	laters := make([]*runlater.RunLater, len(roots))
	for i, r := range roots {
		laters[i] = &runlater.RunLater{Root: r, Named: a.runLater(r), Control: a.control()}
	}
	policy.WatchRunLater(laters...)
	if a.answers == nil {
		return ws, policy, nil
	}
	for _, g := range a.answers.Load(root) {
		policy.Recall(g.Tool, g.Key, g.Allowed)
	}
	policy.Persist(func(ap tools.Approval, allowed bool) {
		if err := a.answers.Remember(root, answers.Answer{Tool: ap.Tool, Key: ap.Key, Allowed: allowed}); err != nil {
			a.log.Warn("answer not remembered for the workspace", "err", err)
		}
	})
	return ws, policy, nil
}

// workspaceRoots are a session's roots: cwd, then each of dirs that is
// an absolute, existing directory, once. A dir that is not is refused
// with the line saying so: a root the user named and mm silently left
// out would make the model's reads there fail for no reason it can see.
func workspaceRoots(cwd string, dirs []string) ([]string, error) {
	roots := []string{cwd}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("additional directory %q must be an absolute path", d)
		}
		d = filepath.Clean(d)
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("additional directory %s is not a directory mm can open", d)
		}
		if !slices.Contains(roots, d) {
			roots = append(roots, d)
		}
	}
	return roots, nil
}

// thoughtLevels are the reasoning levels offered: "none" only
// where mm can turn thinking off (chat_template_kwargs on llama.cpp and
// DMR).
func (a *App) thoughtLevels(context.Context) []string {
	switch a.conn.Provider() {
	case llm.ProviderLlamaCpp, llm.ProviderDMR:
		if a.conn.ThinkingSwitch() {
			// The template reads enable_thinking, not an effort: a
			// switch is what the user means.
			return []string{engine.ThinkingOff, engine.ThinkingOn}
		}
		return []string{engine.ThinkingOff, "low", "medium", "high"}
	}
	return []string{"low", "medium", "high"}
}

// registry is the one table of tools offered to the model: a tool
// is declared only when it can serve.
func (a *App) registry(roots []string, late *lspbridge.Late, extra ...tools.Tool) *tools.Registry {
	cwd := roots[0]
	maxTokens := a.cfg.Sampling.MaxTokens
	if maxTokens == 0 {
		maxTokens = 4096
	}
	servers := a.lspFor(roots...)
	var ts []tools.Tool
	fileTools := files.New(files.Options{MaxOutput: a.maxOutput(), MaxTokens: maxTokens, Diagnostics: lsptool.EditHook{Manager: servers, Late: late}})
	if config.On(a.cfg.EditTools, true) {
		ts = append(ts, fileTools...)
	} else {
		ts = append(ts, fileTools[0]) // read_file only
	}
	if config.On(a.cfg.BashTool, true) {
		var b tools.Tool = bash.New(bash.Options{Timeout: time.Duration(a.cfg.BashTimeout), MaxOutput: a.maxOutput(), Environ: a.env, Env: a.childEnv(), Sandbox: a.sandbox, Named: slices.Sorted(maps.Keys(a.runLater(cwd)))})
		if servers.Available() {
			b = lsptool.CommandHook{Tool: b, Manager: servers, Late: late}
		}
		ts = append(ts, b)
	}
	if servers.Available() {
		ts = append(ts, lsptool.New(lsptool.Options{Manager: servers}))
	}
	ts = append(ts, skilltool.New(a.SkillsFor(cwd)))
	if config.On(a.cfg.PlanTool, true) {
		ts = append(ts, plan.New())
	}
	if config.On(a.cfg.FetchContentTool, false) { // the network, off by default
		ts = append(ts, fetch.New(fetch.Options{MaxOutput: a.maxOutput()}))
	}
	ts = append(ts, a.agents.Tools()...)
	return tools.NewRegistry(append(ts, extra...)...)
}

// childEnv is the one environment policy of every program mm starts —
// bash commands, hooks, MCP servers, language servers: the config's
// bashEnv, and no API key of any agent, under whatever name. An MCP
// server's own env entries are added after it.
func (a *App) childEnv() childenv.Policy {
	drop := append([]string{"MM_API_KEY"}, a.cfg.BashEnv.Drop...)
	drop = append(drop, a.cfg.KeyEnvs()...)
	secrets := append(a.cfg.Keys(), mcpSecrets(fromConfig(a.cfg.MCPServers))...)
	return childenv.Policy{Keep: a.cfg.BashEnv.Keep, Drop: drop, Secrets: secrets, Learned: a.known}
}

// childEnviron is the environment every program mm starts gets
// (childEnv applied to the one mm was started with).
func (a *App) childEnviron() []string {
	return a.childEnv().Environ(a.env)
}

// maxOutput is the tools' own bound: explicit config, else derived
// from the window known now (configured, or probed already), else 16,000.
// The engine caps every output again once a probed window is known.
func (a *App) maxOutput() int {
	if a.cfg.MaxOutput > 0 {
		return a.cfg.MaxOutput
	}
	n, _ := a.conn.Window()
	return compact.MaxOutput(n)
}

// Session builds an engine session whose tools run in env, stored under
// id after every turn; the language servers of cwd read files through
// env's view from now on.
func (a *App) Session(id, cwd string, env tools.Env, extra ...tools.Tool) *engine.Session {
	if a.parent == nil { // an asked agent reads through the caller's view
		a.filesFor(cwd).use(env)
	}
	a.conn.Warm() // the server and its window, in the background
	// Only what the config says explicitly: the profile, then mm's
	// defaults, fill the rest at each request.
	s := a.cfg.Sampling
	if s.MaxTokens == 0 {
		s.MaxTokens = 4096
	}
	// The diagnostics of the session's edits that come after their
	// result: given to the model at its next tool result or before its
	// turn ends.
	late := lspbridge.NewLate()
	reg := a.registry(rootsOf(cwd, env), late, extra...)
	return engine.NewSession(engine.Options{
		Model:          a.model,
		KeepReasoning:  a.model.KeepReasoning,
		ModelName:      "", // filled by the connector once the server is known
		Tools:          reg,
		Env:            env,
		SystemPrompt:   a.cfg.SystemPrompt,
		ProjectContext: a.projectContext(cwd),
		Sampling: llm.Sampling{Temperature: s.Temperature, TopP: s.TopP, MaxTokens: s.MaxTokens, ParallelToolCalls: s.ParallelToolCalls,
			TopK: s.TopK, MinP: s.MinP, PresencePenalty: s.PresencePenalty, RepeatPenalty: s.RepeatPenalty},
		ReasoningEffort: a.cfg.Reasoning.Effort,
		MaxTurns:        a.cfg.MaxTurns,
		PreviewLines:    a.cfg.PreviewLines,
		ContextWindow:   func(context.Context) int { n, _ := a.conn.Window(); return n },
		ToolBudget:      int(a.cfg.ToolBudget),

		Context: engine.ContextOptions{
			Off:              !config.On(a.cfg.Context.Enabled, true),
			KeepLastTurns:    a.cfg.Context.KeepLastTurns,
			MaskAfterTurns:   a.cfg.Context.MaskAfterTurns,
			SummaryMaxTokens: a.cfg.Context.SummaryMaxTokens,
			MaxOutput:        a.cfg.MaxOutput,
		},
		LearnWindow:   a.conn.Learn,
		WindowUnknown: a.conn.WindowUnknown,

		AdaptiveTemperature: a.cfg.AdaptiveTemp,
		Explain:             explain,
		Rewrite:             withMentions(env, a.withTrust(env, a.agents.Rewriter(env, a.rewriter(cwd)))),
		ToolRouter:          toolRouting(a.cfg, reg),
		Hooks:               a.hooksFor(cwd),
		Logger:              a.log,
		Late:                late,

		Store:  a.store,
		ID:     id,
		Served: func() (string, string) { return a.conn.Provider(), a.conn.Model() },
	})
}

// rootsOf are the roots of a session in cwd whose tools run in env: cwd
// first, then env's others.
func rootsOf(cwd string, env tools.Env) []string {
	roots := []string{cwd}
	if env == nil {
		return roots
	}
	for _, r := range env.Roots() {
		if !slices.Contains(roots, r) {
			roots = append(roots, r)
		}
	}
	return roots
}

// rewriter is the prompt rewriter of a session: skills and skill routing
// for a chat agent; a decision agent or a guard agent answers
// every prompt itself. This is the one place that builds an agent's
// answer, whichever front end asks.
func (a *App) rewriter(cwd string) func(context.Context, string) engine.Rewrite {
	switch a.cfg.Kind() {
	case config.DecisionAgent:
		d := decisionAgent(a.cfg)
		return func(ctx context.Context, prompt string) engine.Rewrite {
			return engine.Rewrite{Answer: d.Answer(ctx, prompt)}
		}
	case config.GuardAgent:
		g := guardAgent(a.cfg, a.cfg, risk.DirectTimeout)
		return func(ctx context.Context, prompt string) engine.Rewrite {
			return engine.Rewrite{Answer: g.Answer(ctx, prompt)}
		}
	}
	return a.skillRewriter(a.SkillsFor(cwd), skillRouter(a.cfg))
}

// toolRouting is the session's tool router, nil without
// toolRouting in the config.
func toolRouting(cfg *config.Config, reg *tools.Registry) func(context.Context, string) engine.ToolRoute {
	r := toolRouter(cfg)
	if r == nil {
		return nil
	}
	var names []string
	for _, t := range reg.Tools() {
		names = append(names, t.Name())
	}
	return func(ctx context.Context, prompt string) engine.ToolRoute {
		hide, info := r.Tools(ctx, prompt, names)
		return engine.ToolRoute{Hide: hide, Info: info}
	}
}

// withMentions attaches the prompt's @path mentions after the
// skill rewrite: "[attached file: /abs/path]" lines for the model, a note
// for the user when a mention is outside the workspace or missing.
func withMentions(env tools.Env, next func(context.Context, string) engine.Rewrite) func(context.Context, string) engine.Rewrite {
	return func(ctx context.Context, prompt string) engine.Rewrite {
		r := engine.Rewrite{Prompt: prompt}
		if next != nil {
			r = next(ctx, prompt)
		}
		if r.Answer != "" {
			return r
		}
		lines, notes := tools.Mentions(ctx, env, prompt)
		if len(lines) > 0 {
			r.Prompt = strings.TrimRight(r.Prompt, "\n") + "\n" + strings.Join(lines, "\n")
		}
		r.Notes = append(r.Notes, notes...)
		return r
	}
}

// projectContext reads AGENTS.md, else CLAUDE.md, at the workspace root,
// through the one bounded reader: a FIFO, a device, a link out of the
// workspace or a file over disk.MaxControl is no context (and logged).
func (a *App) projectContext(cwd string) string {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		b, err := disk.Read(context.Background(), cwd, filepath.Join(cwd, name), disk.MaxControl)
		if err == nil {
			return strings.TrimSpace(string(b))
		}
		if !errors.Is(err, fs.ErrNotExist) {
			a.log.Warn("project context not read", "err", err)
		}
	}
	return ""
}
