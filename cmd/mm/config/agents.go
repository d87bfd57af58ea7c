package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// validateAgent refuses, naming the line, a file that is two kinds of
// agent at once or a decision agent that declares tools (E33): a
// decision model answers questions in one pass and never calls a tool.
func (c *Config) validateAgent() error {
	if c.Decision != nil && c.Guard != nil {
		return fmt.Errorf("line %d: guard: and decision: (line %d) in one agent file — it is a guard agent or a decision agent, not both", c.line("guard"), c.line("decision"))
	}
	if c.Decision != nil {
		for _, k := range []struct {
			key string
			on  *bool
		}{{"bashTool", c.BashTool}, {"editTools", c.EditTools}, {"planTool", c.PlanTool}, {"fetchContentTool", c.FetchContentTool}} {
			if On(k.on, false) {
				return fmt.Errorf("line %d: %s: true in a decision agent (decision:, line %d) — a decision model calls no tools; remove the line", c.line(k.key), k.key, c.line("decision"))
			}
		}
		for _, k := range []struct {
			key string
			set bool
		}{{"agents", len(c.Agents) > 0}, {"mcpServers", len(c.MCPServers) > 0}, {"skillRouting", c.SkillRouting.Agent != ""}, {"toolRouting", c.ToolRouting.Agent != ""}} {
			if k.set {
				return fmt.Errorf("line %d: %s in a decision agent (decision:, line %d) — a decision agent has no chat turn to route or tools to offer; remove it", c.line(k.key), k.key, c.line("decision"))
			}
		}
		ids := make([]string, 0, len(c.Decision.Questions))
		for id := range c.Decision.Questions {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if err := checkQuestion(id, c.Decision.Questions[id]); err != nil {
				return fmt.Errorf("line %d: decision.questions.%s: %v", c.line("decision"), id, err)
			}
		}
	}
	if err := c.validateGuard(); err != nil {
		return err
	}
	for _, r := range []struct {
		key string
		v   *float64
	}{{"skillRouting", c.SkillRouting.MinConfidence}, {"toolRouting", c.ToolRouting.DropBelow}} {
		if r.v != nil && (*r.v < 0 || *r.v > 1) {
			return fmt.Errorf("line %d: %s threshold %g is not between 0 and 1", c.line(r.key), r.key, *r.v)
		}
	}
	return nil
}

func checkQuestion(id string, q Question) error {
	switch q.Type {
	case "choice":
		m, ok := q.Criteria.(map[string]any)
		if !ok || len(m) < 2 {
			return fmt.Errorf("a choice needs criteria: a mapping of at least two options (option: description, or null)")
		}
	case "score":
		l, ok := q.Criteria.([]any)
		if !ok || len(l) < 2 || len(l) > 10 {
			return fmt.Errorf("a score needs criteria: a list of 2 to 10 levels, lowest first")
		}
	case "noul":
		if q.Criteria == nil {
			return nil
		}
		m, ok := q.Criteria.(map[string]any)
		for k := range m {
			ok = ok && (k == "true" || k == "false")
		}
		if !ok {
			return fmt.Errorf("a noul's criteria may only describe true and false")
		}
	default:
		return fmt.Errorf("type %q is not choice, noul or score", q.Type)
	}
	return nil
}

// unsupported refuses the agent keys mm accepts in the file format but
// does not act on yet: a key that is read must have its effect, or say
// it has none.
func (c *Config) unsupported() error {
	switch {
	case len(c.Agents) > 0:
		return fmt.Errorf("line %d: agents is not supported yet (E36): /ask-<name> and ask_<name> do not exist — remove it", c.line("agents"))
	}
	return nil
}

// loadAgents loads the agent files the routing keys name, relative to the
// config file, and checks each is a decision agent.
func (c *Config) loadAgents() error {
	for _, r := range []struct {
		key, path string
		dst       **Config
	}{{"skillRouting", c.SkillRouting.Agent, &c.SkillRouting.File}, {"toolRouting", c.ToolRouting.Agent, &c.ToolRouting.File}} {
		if r.path == "" {
			continue
		}
		path := r.path
		if !filepath.IsAbs(path) && c.Source != "" {
			abs, _ := filepath.Abs(c.Source)
			path = filepath.Join(filepath.Dir(abs), path)
		}
		a, err := LoadAgent(path)
		if err != nil {
			return err
		}
		if a.Kind() != DecisionAgent {
			return fmt.Errorf("%s line %d: %s.agent %s is a %s agent, not a decision agent (it has no decision: block)", c.Source, c.line(r.key), r.key, r.path, a.Kind())
		}
		*r.dst = a
	}
	return nil
}

// LoadAgent reads an agent file another file names (a router, a guard):
// its own provider, baseURL and model, untouched by the MM_* overrides
// that configure the chat agent; the API key from its apiKeyEnv.
func LoadAgent(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the agent file %s: %v", path, err)
	}
	a := &Config{}
	if err := Parse(data, a); err != nil {
		return nil, fmt.Errorf("%s %v", path, err)
	}
	a.Source = path
	if a.APIKeyEnv != "" {
		a.APIKey = os.Getenv(a.APIKeyEnv)
	}
	if err := a.validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return a, nil
}
