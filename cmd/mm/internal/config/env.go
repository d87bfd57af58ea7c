package config

import (
	"os"
	"sync"
)

// The secrets of mm's environment (API keys, tokens) are taken out of the
// process environment at start — a child could read it through
// /proc/<mm's pid>/environ — and handed to the new process image another
// way (cmd/mm). They are read from here instead, and given to children
// only through the one environment policy.
var (
	hiddenMu sync.Mutex
	hidden   map[string]string
)

// Hide records variables kept out of the process environment.
func Hide(vars map[string]string) {
	hiddenMu.Lock()
	defer hiddenMu.Unlock()
	hidden = vars
}

// Getenv is os.Getenv, hidden variables included.
func Getenv(name string) string {
	hiddenMu.Lock()
	v, ok := hidden[name]
	hiddenMu.Unlock()
	if ok {
		return v
	}
	return os.Getenv(name)
}

// Environ is os.Environ with the hidden variables: the environment mm was
// started with, which the child environment policy filters.
func Environ() []string {
	env := os.Environ()
	hiddenMu.Lock()
	defer hiddenMu.Unlock()
	for k, v := range hidden {
		env = append(env, k+"="+v)
	}
	return env
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
