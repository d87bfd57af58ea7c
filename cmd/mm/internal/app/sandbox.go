package app

import (
	"context"
	"os"
	"path/filepath"

	"github.com/mm-agent/mm/permit/confine"
)

// newSandbox sets up the config's sandbox (nil when off) and logs the
// mechanism in force and why — the first line the app logs, so a
// session's log says how its commands ran.
func (a *App) newSandbox() *confine.Sandbox {
	var s *confine.Sandbox
	if sb := a.cfg.Sandbox; sb.On() {
		exe, _ := os.Executable() // "" fails the probe: no command runs
		var own []string
		aside := ""
		if home, err := a.env.Home(); err == nil && home != "" {
			own = append(own, filepath.Join(home, ".config", "mm"))
		}
		if dir, err := StateDir(a.env); err == nil {
			own, aside = append(own, dir), filepath.Join(dir, "set-aside")
		}
		s = confine.New(context.Background(), confine.Options{
			Want: sb.Want(), Network: sb.NetworkOn(), Exe: exe,
			Environ: a.childEnviron(), Keep: a.cfg.BashEnv.Keep, Own: own, Aside: aside,
		})
	}
	m, why := s.Mechanism()
	a.log.Info("sandbox", "mechanism", string(m), "why", why)
	if w := s.Warning(); w != "" {
		a.log.Warn(w)
	}
	return s
}

// SandboxWarning is the ⚠ line the user sees at start when the sandbox
// asked for is weaker than asked or cannot run commands; "" otherwise.
func (a *App) SandboxWarning() string { return a.sandbox.Warning() }

// doctorSandbox is mm doctor's view of the sandbox; nil when it is off.
func (a *App) doctorSandbox() func() (string, string, string) {
	if a.sandbox == nil {
		return nil
	}
	return func() (string, string, string) {
		m, _ := a.sandbox.Mechanism()
		return string(m), a.sandbox.Describe(), a.sandbox.Warning()
	}
}
