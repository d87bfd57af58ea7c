package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mm-agent/mm/fileedit/disk"
)

// validateAgent refuses, naming the line, a file that is two kinds of
// agent at once or a decision agent that declares tools: a
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

// loadAgents loads the agent files the routing keys name, relative to the
// config file, and checks each is a decision agent.
func (c *Config) loadAgents(env Env) error {
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
		a, err := LoadAgent(env, path)
		if err != nil {
			return err
		}
		if a.Kind() != DecisionAgent {
			return fmt.Errorf("%s line %d: %s.agent %s is a %s agent, not a decision agent (it has no decision: block)", c.Source, c.line(r.key), r.key, r.path, a.Kind())
		}
		*r.dst = a
	}
	for _, name := range c.Agents.Names() {
		ref := c.Agents[name]
		a, err := loadAsked(env, c.rel(ref.File))
		if err != nil {
			return fmt.Errorf("%s line %d: agents.%s: %v", c.Source, ref.Line, name, err)
		}
		ref.Config = a
	}
	return nil
}

// rel resolves a path a key of this file names: relative to the file,
// or absolute.
func (c *Config) rel(path string) string {
	if filepath.IsAbs(path) || c.Source == "" {
		return path
	}
	abs, _ := filepath.Abs(c.Source)
	return filepath.Join(filepath.Dir(abs), path)
}

// Agents maps a short name to another agent file, e.g. agents:
// {historian: historian.yaml}: each becomes an ask_<name> tool for the
// chat model and an /ask-<name> command for the user.
type Agents map[string]*AskedAgent

// AskedAgent is one entry of agents:.
type AskedAgent struct {
	// File is the agent file, relative to the config file or absolute.
	File string
	// Line is the entry's line, for messages.
	Line int
	// Config is the agent file, loaded and checked by Load.
	Config *Config
}

// Names are the agents' names, sorted (tools and commands keep one order).
func (a Agents) Names() []string {
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// agentName is what a name may be: it becomes part of a tool name and of
// a slash command, which servers and editors restrict.
// A loop, not a regexp compiled at every start.
func agentName(name string) bool {
	if name == "" || len(name) > 32 || !('a' <= name[0] && name[0] <= 'z' || 'A' <= name[0] && name[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// maxDescription bounds an asked agent's description: it goes into the
// ask_<name> tool's description, sent with every request.
const maxDescription = 160

// UnmarshalYAML reads name: FILE, or name: {file: FILE, write: false};
// write: true is refused until asked agents can write (see checkAsked).
func (a *Agents) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: agents maps names to agent files, e.g. agents: {historian: historian.yaml}", n.Line)
	}
	out := Agents{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !agentName(k.Value) {
			return fmt.Errorf("line %d: agents: %q is not a short name — a letter, then letters, digits, - or _ (32 at most): it becomes the tool ask_<name> and the command /ask-<name>", k.Line, k.Value)
		}
		ref := &AskedAgent{Line: k.Line}
		switch v.Kind {
		case yaml.ScalarNode:
			ref.File = v.Value
		case yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				kk, vv := v.Content[j], v.Content[j+1]
				switch kk.Value {
				case "file":
					ref.File = vv.Value
				case "write":
					var w bool
					if err := vv.Decode(&w); err != nil {
						return fmt.Errorf("line %d: agents.%s.write must be true or false", kk.Line, k.Value)
					}
					if w {
						return fmt.Errorf("line %d: agents.%s.write: true is not supported yet: an asked agent is read-only — remove it", kk.Line, k.Value)
					}
				default:
					return fmt.Errorf("line %d: unknown key \"agents.%s.%s\" (valid here: file, write)", kk.Line, k.Value, kk.Value)
				}
			}
		default:
			return fmt.Errorf("line %d: agents.%s must be an agent file, e.g. %s: %s.yaml", v.Line, k.Value, k.Value, k.Value)
		}
		if strings.TrimSpace(ref.File) == "" {
			return fmt.Errorf("line %d: agents.%s names no agent file (write e.g. %s: %s.yaml)", k.Line, k.Value, k.Value, k.Value)
		}
		out[k.Value] = ref
	}
	*a = out
	return nil
}

// loadAsked loads an asked agent's file as mm would load it as its
// own config — its skillsDir and routing agents relative to it — and
// refuses what an asked agent cannot
// honour (checkAsked).
func loadAsked(env Env, path string) (*Config, error) {
	a, err := LoadAgent(env, path)
	if err != nil {
		return nil, err
	}
	if err := a.checkAsked(); err != nil {
		return nil, fmt.Errorf("%s %v", path, err)
	}
	if a.SkillsDir != "" {
		a.SkillsDir = a.rel(a.SkillsDir)
	}
	if err := a.loadAgents(env); err != nil {
		return nil, err
	}
	return a, nil
}

// checkAsked refuses, naming the line, a key an asked agent cannot
// honour: it changes nothing (read_file, lsp, read_skill and, when its
// file enables it, fetch_content), asks no other agent (depth 1, so
// agents never loop asking each other), and its permission questions go
// to the user of the agent that asks, under that agent's rules.
func (c *Config) checkAsked() error {
	for _, k := range []struct {
		key string
		on  *bool
	}{{"bashTool", c.BashTool}, {"editTools", c.EditTools}, {"planTool", c.PlanTool}} {
		if On(k.on, false) {
			return fmt.Errorf("line %d: %s: true in an asked agent — an asked agent is read-only (read_file, lsp, read_skill, fetch_content); remove the line", c.line(k.key), k.key)
		}
	}
	for _, k := range []struct {
		key, why string
		set      bool
	}{
		{"agents", "an asked agent asks no other agent", len(c.Agents) > 0},
		{"mcpServers", "an asked agent is read-only and MCP tools can change things", len(c.MCPServers) > 0},
		{"yolo", "its permission questions go to the user of the agent that asks, under that agent's rules", c.Yolo},
		{"permissions", "its permission questions go to the user of the agent that asks, under that agent's rules", len(c.Permissions.Allow)+len(c.Permissions.Deny) > 0},
		{"bashTimeout", "an asked agent runs no commands", c.BashTimeout != 0},
		{"bashEnv", "an asked agent runs no commands", len(c.BashEnv.Keep)+len(c.BashEnv.Drop) > 0},
		{"sandbox", "an asked agent runs no commands", c.Sandbox != Sandbox{}},
		{"lsp", "an asked agent uses the language servers of the agent that asks", len(c.LSP) > 0},
		{"previewLines", "nobody sees an asked agent's tool outputs, only its answer", c.PreviewLines != 0},
	} {
		if k.set {
			return fmt.Errorf("line %d: %s in an asked agent — %s; remove it", c.line(k.key), k.key, k.why)
		}
	}
	if n := len([]rune(c.Description)); n > maxDescription {
		return fmt.Errorf("line %d: description is %d characters — keep it to %d at most: it is sent to the chat model with every request", c.line("description"), n, maxDescription)
	}
	return nil
}

// pathless is what went wrong with a file whose path the message already
// names: "no such file or directory", not "open X: no such file…" again.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// LoadAgent reads an agent file another file names (a router, a guard):
// its own provider, baseURL and model, untouched by the MM_* overrides
// that configure the chat agent; the API key from its apiKeyEnv.
func LoadAgent(env Env, path string) (*Config, error) {
	data, err := disk.Read(context.Background(), "", path, disk.MaxControl)
	if err != nil {
		return nil, fmt.Errorf("cannot read the agent file %s: %v", path, pathless(err))
	}
	a := &Config{}
	if err := Parse(data, a); err != nil {
		return nil, fmt.Errorf("%s %v", path, err)
	}
	a.Source, a.data = path, data
	if a.APIKeyEnv != "" {
		a.APIKey = env.Get(a.APIKeyEnv)
	}
	if err := a.validate(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return a, nil
}
