package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/mm-agent/mm/acp"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/permit/childenv"
	"github.com/mm-agent/mm/tools"
)

// ACPAgent serves an editor over ACP (Serve) with the app its config
// builds. An editor starts the agent once and keeps it, so a config read
// once would answer every session/new with its error until a restart the
// user cannot easily make, and a changed config would go unseen. So the
// config (with the agent files it names) is read again at each
// session/new, load and resume; a reading that differs from the last
// builds a new app, a wrong one answers with its line. Sessions already
// open keep the app they were built with.
type ACPAgent struct {
	Read  func() (*config.Config, *config.Trust, error) // config.LoadFor
	Cwd   string                                        // the agent's workspace: where the editor's choice of server is kept
	Env   config.Env                                    // the one mm was started with
	Log   *slog.Logger
	Store *store.Store // shared by every reading
	// Known are the secrets of every reading: a key a new reading names
	// is masked in the log and kept from the commands of every session,
	// those open already included.
	Known *childenv.Secrets
	// Bad is the last reading's error line, logged once; start-up sets
	// it when the first reading failed.
	Bad string
	// Warned is the last trust warning logged (start-up said it on
	// stderr): a new one is logged when a re-read changes it.
	Warned string
	// Exe is mm's own executable, which an editor may run for the
	// set-up (acp.Setup.Command); "" leaves that form out.
	Exe string
	// Endpoints are where a session/new with no server configured looks
	// for one; nil is llm.LocalEndpoints(), the ports a turn would try.
	Endpoints []llm.Endpoint

	ctx   context.Context // the agent's life: skill watchers stop with it
	agent *acp.Agent

	version string // Serve's

	mu   sync.Mutex
	cur  *App
	b    *acp.Builder // cur's
	apps []*App       // every app built, closed when the agent stops
}

// builder reads the config and returns what the next session is built
// with: the same builder while the config reads the same.
func (c *ACPAgent) builder() (*acp.Builder, error) {
	cfg, trust, err := c.Read()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		line := ConfigLine(err)
		if line != c.Bad {
			c.Log.Error("config", "err", line)
			c.Bad = line
		}
		return nil, errors.New(line)
	}
	c.Bad = ""
	// The trust state holds the hash of every file the config names
	// (agent files, hook and server programs): a change to one is a new
	// reading too.
	if c.cur != nil && reflect.DeepEqual(c.cur.cfg, cfg) && reflect.DeepEqual(c.cur.trust, trust) {
		return c.b, nil
	}
	reread := c.cur != nil
	c.Known.Add(cfg.KeyEnvs(), cfg.Keys())
	c.cur = New(Options{Config: cfg, Trust: trust, Env: c.Env, Log: c.Log, Store: c.Store, Version: c.version, Known: c.Known}) // logs its sandbox first
	c.Log.Info("config", "source", cfg.Source, "reread", reread)
	if w := trust.Warning(); w != c.Warned {
		c.Warned = w
		if w != "" {
			c.Log.Warn("workspace config not trusted", "ignored", strings.Join(trust.Ignored, ","))
		}
	}
	c.cur.conn.Retarget(c.chosen())
	c.apps = append(c.apps, c.cur)
	c.b = c.cur.acpBuilder(c.ctx, func(cwd string) { c.agent.Announce(cwd) })
	return c.b, nil
}

// close ends what every app started (language servers, connections,
// asked agents, skill watchers, the sandbox's temp dir); the agent has stopped.
func (c *ACPAgent) close() {
	c.mu.Lock()
	apps := c.apps
	c.apps = nil
	c.mu.Unlock()
	for _, a := range apps {
		a.Close()
		a.waitSkillWatches()
	}
}

// acpBuilder is how a builds ACP sessions.
func (a *App) acpBuilder(ctx context.Context, announce func(cwd string)) *acp.Builder {
	return &acp.Builder{
		Commands: a.commands(ctx, announce),
		Workspace: func(cwd string, dirs []string) (tools.Env, *permit.Policy, error) {
			return a.Workspace(cwd, dirs, nil)
		},
		Engine: func(id, cwd string, env tools.Env, extra []tools.Tool) (*engine.Session, error) {
			return a.Session(id, cwd, env, extra...), nil
		},
		MCP:           a.acpMCP,
		Models:        a.conn.Models,
		ThoughtLevels: a.thoughtLevels,
		// The ⚠ that starts the line on a terminal is the notice's
		// severity in the editor, and the italic note adds its own.
		Untrusted: strings.TrimPrefix(a.trust.Warning(), "⚠ "),
	}
}

// Serve serves the editor on stdio until EOF, building sessions from
// the config as it reads at each session/new; version is what
// initialize's agentInfo says.
func (c *ACPAgent) Serve(ctx context.Context, version string, stdin io.Reader, stdout io.Writer) int {
	ctx, stop := context.WithCancel(ctx)
	defer c.close()
	defer stop()
	c.ctx = ctx
	c.version = version
	c.agent = acp.New(acp.Options{Name: "mm", Version: version, Logger: c.Log, Store: c.Store, Builder: c.builder,
		Providers: &acp.Providers{Workspace: c.Cwd, Configured: c.configured, Changed: c.follow},
		Setup:     &acp.Setup{Args: []string{"setup"}, Command: c.Exe, Ready: c.ready}})
	if err := acp.Serve(ctx, c.agent, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) {
		c.Log.Error("acp stopped", "err", err)
		return exitcode.Failed
	}
	return exitcode.OK
}

// ready is nil when a new session can reach a model server: the config
// names one (or cannot be read: session/new answers with that line), the
// user chose one in the editor, or one answers on a usual local port.
// A configured server that is down is not a set-up to offer: its turns
// say what is wrong with it.
func (c *ACPAgent) ready(ctx context.Context) error {
	cfg, _, err := c.Read()
	if err != nil || cfg.BaseURL != "" || c.chosen() != "" {
		return nil
	}
	eps := c.Endpoints
	if eps == nil {
		eps = llm.LocalEndpoints()
	}
	if _, _, err := llm.DetectFrom(ctx, nil, eps); err == nil {
		return nil
	}
	return errors.New("mm needs a model server: none is configured and none answers on this machine — run `mm setup` in a terminal to pick one, or " + llm.StartHint())
}

// chosen is the base URL of the model server the user chose in the
// editor for the workspace (providers/set, remembered in the state
// directory), "" for the configured one. It is the user's own act, so it
// overrides the config, trusted or not; the connector keeps the config's
// key and model for the configured server only.
func (c *ACPAgent) chosen() string {
	if c.Store == nil {
		return ""
	}
	ch := c.Store.Providers(c.Cwd)
	if e, ok := ch.Set[ch.Active]; ok && ch.Active != "" {
		return e.BaseURL
	}
	return ""
}

// follow points every app's connector at the chosen server, so that the
// following turns of the open sessions go there too, not only the
// sessions opened after.
func (c *ACPAgent) follow() {
	base := c.chosen()
	c.mu.Lock()
	apps := slices.Clone(c.apps)
	c.mu.Unlock()
	for _, a := range apps {
		a.conn.Retarget(base)
	}
}

// configured is the config's model server as providers/list shows it,
// before the editor's choice; a base URL the untrusted workspace config
// names is reported, not used.
func (c *ACPAgent) configured() (acp.Configured, error) {
	cfg, trust, err := c.Read()
	if err != nil {
		return acp.Configured{}, errors.New(ConfigLine(err))
	}
	out := acp.Configured{Kind: cfg.Provider, BaseURL: cfg.BaseURL}
	if trust != nil && trust.Workspace && !trust.Trusted && trust.Full != nil && trust.Full.BaseURL != cfg.BaseURL {
		out.Untrusted = trust.Full.BaseURL
	}
	return out, nil
}
