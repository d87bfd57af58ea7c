package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// validateGuard checks a guard: block: risks named, a threshold
// between 0 and 1, and nothing a classifier cannot use — a guard model
// answers about one message and calls no tool.
func (c *Config) validateGuard() error {
	g := c.Guard
	if g == nil {
		return nil
	}
	if len(g.Risks) == 0 {
		return fmt.Errorf("line %d: guard: names no risk (write e.g. guard: {risks: [jailbreak], threshold: 0.8})", c.line("guard"))
	}
	seen := map[string]bool{}
	for i, r := range g.Risks {
		switch {
		case strings.TrimSpace(r.Name) == "":
			return fmt.Errorf("line %d: guard.risks[%d] has no name", c.line("guard"), i)
		case seen[r.Name]:
			return fmt.Errorf("line %d: guard.risks names %s twice", c.line("guard"), r.Name)
		case r.Definition != "" && c.Provider == "ollama":
			return fmt.Errorf("line %d: guard.risks.%s has a definition, but Ollama's guardian templates take only a risk name — serve the model with llama-server --jinja or vLLM, or use a built-in risk", c.line("guard"), r.Name)
		}
		seen[r.Name] = true
	}
	if g.Threshold < 0 || g.Threshold > 1 {
		return fmt.Errorf("line %d: guard.threshold %g is not between 0 and 1", c.line("guard"), g.Threshold)
	}
	for _, k := range []struct {
		key string
		set bool
	}{{"bashTool", On(c.BashTool, false)}, {"editTools", On(c.EditTools, false)}, {"planTool", On(c.PlanTool, false)}, {"fetchContentTool", On(c.FetchContentTool, false)},
		{"agents", len(c.Agents) > 0}, {"mcpServers", len(c.MCPServers) > 0}, {"skillRouting", c.SkillRouting.Agent != ""}, {"toolRouting", c.ToolRouting.Agent != ""},
		{"hooks", len(c.Hooks.PreGeneration)+len(c.Hooks.PreToolUse)+len(c.Hooks.PostToolUse) > 0}} {
		if k.set {
			return fmt.Errorf("line %d: %s in a guard agent (guard:, line %d) — a guard model answers about one message, with no tools, routing or hooks; remove it", c.line(k.key), k.key, c.line("guard"))
		}
	}
	return nil
}

// validateHooks checks each hook entry: a command, or (postToolUse only)
// a guard agent — one of the two, never both.
func (c *Config) validateHooks() error {
	for _, e := range []struct {
		event string
		hs    []Hook
	}{{"preGeneration", c.Hooks.PreGeneration}, {"preToolUse", c.Hooks.PreToolUse}, {"postToolUse", c.Hooks.PostToolUse}} {
		for i, h := range e.hs {
			cmd := len(h.Command) > 0 && h.Command[0] != ""
			where := fmt.Sprintf("line %d: hooks.%s[%d]", h.Line, e.event, i)
			switch {
			case cmd && h.Guard != "":
				return fmt.Errorf("%s has both command and guard — an entry runs a command or asks a guard agent; write two entries", where)
			case h.Guard != "" && e.event != "postToolUse":
				return fmt.Errorf("%s: guard is only supported in postToolUse (a guard judges a tool's output) — move it there", where)
			case !cmd && h.Guard == "":
				return fmt.Errorf("%s has no command (write command: [./my-hook.sh], or in postToolUse guard: guard.yaml)", where)
			}
		}
	}
	return nil
}

// loadGuards loads the guard agents postToolUse entries name, relative
// to the config file, and checks each is a guard agent.
func (c *Config) loadGuards(env Env) error {
	for i := range c.Hooks.PostToolUse {
		h := &c.Hooks.PostToolUse[i]
		if h.Guard == "" {
			continue
		}
		path := h.Guard
		if !filepath.IsAbs(path) && c.Source != "" {
			abs, _ := filepath.Abs(c.Source)
			path = filepath.Join(filepath.Dir(abs), path)
		}
		a, err := LoadAgent(env, path)
		if err != nil {
			return fmt.Errorf("%s line %d: hooks.postToolUse[%d].guard: %v", c.Source, h.Line, i, err)
		}
		if a.Kind() != GuardAgent {
			return fmt.Errorf("%s line %d: hooks.postToolUse[%d].guard %s is a %s agent, not a guard agent (it has no guard: block)", c.Source, h.Line, i, h.Guard, a.Kind())
		}
		h.GuardFile = a
	}
	return nil
}
