package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/mm-agent/mm/cmd/mm/internal/app"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/logfile"
	"github.com/mm-agent/mm/permit/childenv"
	"github.com/mm-agent/mm/permit/trust"
)

// An invocation is one run of mm: the environment and stdio main took
// from the process, mm's flags, and what reads the config.
type invocation struct {
	env    environment
	f      flags
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// hashes keeps the hash of each file trust covers, read again only
	// once changed: ACP reads the config again at each session/new.
	hashes *trust.Cache
}

// readConfig reads the config in use in the working directory (-c,
// $MM_CONFIG, the workspace's over the user's, or the user's) and the
// workspace config's trust state.
func (inv *invocation) readConfig() (*config.Config, *config.Trust, error) {
	return config.LoadFor(inv.env.vars, inv.f.config, inv.env.dir, app.TrustFile(inv.env.vars), inv.hashes)
}

// loadConfig is the reading of the config at start, the one of the
// process (ACP reads it again at each session/new): the variables it
// names as holding keys are then hidden like the other secrets, before
// anything starts.
func (inv *invocation) loadConfig() (*config.Config, *config.Trust, error) {
	cfg, t, err := inv.readConfig()
	if err == nil && cfg != nil && inv.env.hide != nil {
		inv.env.hide(cfg.KeyEnvs())
	}
	return cfg, t, err
}

// cwd is the working directory; ok is false after saying on stderr that
// it cannot be read.
func (inv *invocation) cwd() (dir string, ok bool) {
	if inv.env.dirErr != nil {
		fmt.Fprintln(inv.stderr, "mm: cannot read the working directory:", inv.env.dirErr)
		return "", false
	}
	return inv.env.dir, true
}

// A startup is what a command asks of start-up.
type startup struct {
	bad  badConfig
	warn bool // say the untrusted workspace config's warning on stderr
	// logToState logs to the state directory unless --log says where:
	// stderr is the editor's, which most editors do not show.
	logToState bool
}

// A badConfig is what start-up does with a config that does not load.
type badConfig int

const (
	configRefused  badConfig = iota // say why on stderr and stop: nothing runs on a config the user did not mean
	configServed                    // say why on stderr and go on: the command answers with it (ACP)
	configReported                  // say nothing: the command reports it (mm doctor)
)

// A start is what start-up made for a command.
type start struct {
	cwd      string
	cfg      *config.Config // built-in defaults when it does not load
	trust    *config.Trust
	cfgErr   error
	known    *childenv.Secrets // the secrets of every reading of the config
	log      *slog.Logger
	closeLog func()
}

// start reads the config, once, and opens the log, as s asks; nil after
// a usage error said on stderr.
func (inv *invocation) start(s startup) *start {
	cwd, ok := inv.cwd()
	if !ok {
		return nil
	}
	st := &start{cwd: cwd}
	st.cfg, st.trust, st.cfgErr = inv.loadConfig()
	if st.cfgErr != nil && s.bad != configReported {
		fmt.Fprintln(inv.stderr, "mm:", app.ConfigLine(st.cfgErr))
		if s.bad == configRefused {
			return nil
		}
	}
	if st.cfg == nil {
		st.cfg = &config.Config{Source: "built-in defaults"} // mm doctor reports the error
	}
	st.known = &childenv.Secrets{} // grows as configs read again name more keys
	st.known.Add(st.cfg.KeyEnvs(), st.cfg.Keys())
	logDir, _ := app.StateDir(inv.env.vars) // none: the terminal front ends log nowhere
	var err error
	st.log, st.closeLog, err = logfile.Open(inv.f.logFile, inv.stderr, s.logToState, logDir, st.known)
	if err != nil {
		fmt.Fprintln(inv.stderr, "mm:", err)
		return nil
	}
	if w := st.trust.Warning(); w != "" && s.warn {
		fmt.Fprintln(inv.stderr, "mm:", w)
	}
	return st
}

// logUntrusted logs what the untrusted workspace config had ignored.
func (st *start) logUntrusted() {
	if st.trust.Warning() != "" {
		st.log.Warn("workspace config not trusted", "ignored", strings.Join(st.trust.Ignored, ","))
	}
}

// app builds the app a command runs with from o, the config, environment,
// log and version filled in. The app logs its sandbox first: what confines
// the commands heads the log of what they did.
func (inv *invocation) app(st *start, o app.Options) *app.App {
	o.Config, o.Env, o.Log, o.Version = st.cfg, inv.env.vars, st.log, mmVersion()
	a := app.New(o)
	st.logUntrusted()
	return a
}
