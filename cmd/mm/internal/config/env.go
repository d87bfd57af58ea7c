package config

import (
	"errors"
	"os"
	"runtime"
	"strings"
)

// Env is the environment mm was started with, as KEY=value lines (what
// os.Environ gives), its secrets included. mm reads its variables and the
// user's home directory from this value, never from the process: main
// fills it once from the process, and a test runs an mm in its own
// environment beside others in the same process.
//
// The secrets (API keys, tokens) are taken out of the process environment
// at start — a child could read it through /proc/<mm's pid>/environ — and
// handed back to mm another way (cmd/mm); they are in Env all the same,
// and reach a child only through the one environment policy.
type Env []string

// ProcessEnv is the environment of this process with the variables
// hidden from it added back.
func ProcessEnv(hidden map[string]string) Env {
	env := Env(os.Environ())
	for k, v := range hidden {
		env = append(env, k+"="+v)
	}
	return env
}

// Get is the value of the variable name, "" when unset; the last line
// naming it wins, as with a duplicated variable in a child's environment.
func (e Env) Get(name string) string {
	for i := len(e) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(e[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// Home is the user's home directory, as os.UserHomeDir finds it in the
// process environment.
func (e Env) Home() (string, error) {
	name := "HOME"
	switch runtime.GOOS {
	case "windows":
		name = "USERPROFILE"
	case "plan9":
		name = "home"
	}
	if h := e.Get(name); h != "" {
		return h, nil
	}
	return "", errors.New("$" + name + " is not defined")
}

// KeyEnvs names the variables the config reads keys from: apiKeyEnv of
// the file and of every agent file it names.
func (c *Config) KeyEnvs() []string {
	var out []string
	c.each(func(a *Config) {
		if a.APIKeyEnv != "" {
			out = append(out, a.APIKeyEnv)
		}
	})
	return out
}

// Keys are the API keys of the config and of every agent file it names
// (asked, routing, guard agents): each is masked wherever mm writes.
func (c *Config) Keys() []string {
	var out []string
	c.each(func(a *Config) {
		if a.APIKey != "" {
			out = append(out, a.APIKey)
		}
	})
	return out
}

// each calls f on c and every agent file it names, once each.
func (c *Config) each(f func(*Config)) {
	seen := map[*Config]bool{}
	var walk func(*Config)
	walk = func(a *Config) {
		if a == nil || seen[a] {
			return
		}
		seen[a] = true
		f(a)
		for _, hs := range [][]Hook{a.Hooks.PreGeneration, a.Hooks.PreToolUse, a.Hooks.PostToolUse} {
			for _, h := range hs {
				walk(h.GuardFile)
			}
		}
		walk(a.SkillRouting.File)
		walk(a.ToolRouting.File)
		for _, n := range a.Agents.Names() {
			walk(a.Agents[n].Config)
		}
	}
	walk(c)
}
