package config

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/fileedit/disk"
	"github.com/mm-agent/mm/internal/textdist"
)

// Config is the whole file. Zero values mean "the default" (Defaults).
type Config struct {
	Provider        string    `yaml:"provider"`
	BaseURL         string    `yaml:"baseURL"`
	Model           string    `yaml:"model"`
	APIKeyEnv       string    `yaml:"apiKeyEnv"`
	ContextWindow   int       `yaml:"contextWindow"`
	Profile         string    `yaml:"profile"`
	Sampling        Sampling  `yaml:"sampling"`
	Reasoning       Reasoning `yaml:"reasoning"`
	SystemPrompt    string    `yaml:"systemPrompt"`
	MaxTurns        int       `yaml:"maxTurns"`
	MaxOutput       int       `yaml:"maxOutput"`
	PreviewLines    int       `yaml:"previewLines"`
	WatchdogTimeout Duration  `yaml:"watchdogTimeout"`
	FirstTokenTime  Duration  `yaml:"firstTokenTimeout"`
	ToolBudget      Budget    `yaml:"toolBudget"`
	// AdaptiveTemp raises the temperature for the call after a loop is
	// detected.
	AdaptiveTemp bool     `yaml:"adaptiveTemperature"`
	BashTimeout  Duration `yaml:"bashTimeout"`
	BashEnv      BashEnv  `yaml:"bashEnv"`
	// Sandbox confines bash commands (Linux): namespaces, or Landlock.
	Sandbox          Sandbox        `yaml:"sandbox"`
	BashTool         *bool          `yaml:"bashTool"`
	EditTools        *bool          `yaml:"editTools"`
	PlanTool         *bool          `yaml:"planTool"`
	FetchContentTool *bool          `yaml:"fetchContentTool"`
	Yolo             bool           `yaml:"yolo"`
	Permissions      Permissions    `yaml:"permissions"`
	Context          ContextCfg     `yaml:"context"`
	SkillsDir        string         `yaml:"skillsDir"`
	SkillRouting     Routing        `yaml:"skillRouting"`
	ToolRouting      ToolRouting    `yaml:"toolRouting"`
	Decision         *DecisionModel `yaml:"decision"`
	Guard            *Guard         `yaml:"guard"`
	// Agents are other agent files the chat model and the user can ask
	// one question, by name.
	Agents Agents `yaml:"agents"`
	// Description says who this agent is, in a few words, to a chat model
	// that may ask it (agents:); without it the model name says it.
	Description string         `yaml:"description"`
	Hooks       Hooks          `yaml:"hooks"`
	LSP         map[string]LSP `yaml:"lsp"`
	// MCPServers are connected for every session, like the editor's
	// (the same shape as ACP's session/new mcpServers).
	MCPServers []MCPServer `yaml:"mcpServers"`

	// APIKey is read from MM_API_KEY or the variable named by APIKeyEnv;
	// never from the file.
	APIKey string `yaml:"-"`
	// Source says where the config came from, for messages.
	Source string `yaml:"-"`
	// Base is the user's own config file a workspace's .mm/agent.yaml
	// was laid over (layer), "" when there was none.
	Base string `yaml:"-"`

	// lines are the top-level keys' lines in the file, for messages.
	lines map[string]int
	// data are the bytes the file was parsed from: trust hashes these,
	// not a second reading (Hash).
	data []byte
	// keys are the keys the file sets, as dotted paths (sampling,
	// sampling.top_p): laying it over the user's config (layer) takes
	// only what the file wrote, not the zero values of what it did not.
	keys map[string]bool
	// ignored are the untrusted keys cleared from a workspace config that
	// is not trusted (LoadFor).
	ignored []string
	// ownKey is the value of the variable apiKeyEnv names, alone: the key
	// a workspace's own server gets (layer), never MM_API_KEY.
	ownKey string
	// envServer says MM_BASE_URL chose the server: the user's, whatever
	// the file says.
	envServer bool
}

// Sampling parameters; nil means the default.
type Sampling struct {
	Temperature       *float64 `yaml:"temperature"`
	TopP              *float64 `yaml:"top_p"`
	MaxTokens         int      `yaml:"max_tokens"`
	ParallelToolCalls *bool    `yaml:"parallel_tool_calls"`
	TopK              *int     `yaml:"top_k"`
	MinP              *float64 `yaml:"min_p"`
	PresencePenalty   *float64 `yaml:"presence_penalty"`
	RepeatPenalty     *float64 `yaml:"repeat_penalty"`
}

// Reasoning controls.
type Reasoning struct {
	Effort string `yaml:"effort"`
}

// Permissions are rules like "bash:git status*".
type Permissions struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// BashEnv adjusts which environment variables bash commands see: by
// default all but those whose name holds KEY, SECRET, TOKEN, PASSWORD or
// CREDENTIAL, MM_API_KEY and apiKeyEnv's. Keep lets a named one through
// (GITHUB_TOKEN); Drop removes more. Both take shell patterns (NPM_*).
type BashEnv struct {
	Keep []string `yaml:"keep"`
	Drop []string `yaml:"drop"`
}

// ContextCfg is context budgeting.
type ContextCfg struct {
	Enabled          *bool `yaml:"enabled"`
	KeepLastTurns    int   `yaml:"keepLastTurns"`
	MaskAfterTurns   int   `yaml:"maskAfterTurns"`
	SummaryMaxTokens int   `yaml:"summaryMaxTokens"`
}

// Routing is skill routing through a decision agent.
type Routing struct {
	// Agent is the decision agent's file, relative to this config file.
	Agent string `yaml:"agent"`
	// MinConfidence is the least Sure a choice needs (nil: 0.6).
	MinConfidence *float64 `yaml:"minConfidence"`
	// Timeout bounds the call (0: 2 s).
	Timeout Duration `yaml:"timeout"`
	// File is the agent file, loaded and checked by Load.
	File *Config `yaml:"-"`
}

// ToolRouting drops tool groups a decision agent finds irrelevant.
type ToolRouting struct {
	Agent string `yaml:"agent"`
	// DropBelow: a group is dropped only below this P(needed) (nil: 0.2).
	DropBelow *float64 `yaml:"dropBelow"`
	Timeout   Duration `yaml:"timeout"`
	File      *Config  `yaml:"-"`
}

// DecisionModel is the decision: block, which makes the file a decision
// agent: the last user message goes to POST /v1/systemone with these
// questions instead of the chat model. No questions (decision: {}) means
// the questions are mm's own, as routing writes them.
type DecisionModel struct {
	Questions map[string]Question `yaml:"questions"`
}

// Question is one typed question of a decision agent.
type Question struct {
	Type         string `yaml:"type"` // choice, noul or score
	Instructions string `yaml:"instructions"`
	// Criteria: for a choice, option → description (or null); for a
	// score, the levels, lowest first; for a noul, optional true/false
	// descriptions.
	Criteria any `yaml:"criteria"`
}

// Guard makes the file a guard agent: a classifier asked about one
// message, answering named risks with a probability.
type Guard struct {
	Risks []Risk `yaml:"risks"`
	// Threshold: a risk at or above it is flagged (0: 0.5).
	Threshold float64 `yaml:"threshold"`
	// Timeout bounds one request to the guard (0: 10 s).
	Timeout Duration `yaml:"timeout"`
}

// Risk is a risk name the guard model knows (jailbreak, harm, …), or one
// of the user's own with its definition: {name: x, definition: "…"}.
type Risk struct {
	Name       string `yaml:"name"`
	Definition string `yaml:"definition"`
}

// UnmarshalYAML accepts a name or a {name, definition} mapping.
func (r *Risk) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		r.Name = n.Value
		return nil
	}
	type plain Risk
	var p plain
	if err := n.Decode(&p); err != nil {
		return fmt.Errorf("line %d: a risk is a name or {name: x, definition: \"…\"}", n.Line)
	}
	*r = Risk(p)
	return nil
}

// Kind of agent a config file defines.
const (
	ChatAgent     = "chat"
	DecisionAgent = "decision"
	GuardAgent    = "guard"
)

// Kind says what kind of agent the file defines.
func (c *Config) Kind() string {
	switch {
	case c.Decision != nil:
		return DecisionAgent
	case c.Guard != nil:
		return GuardAgent
	}
	return ChatAgent
}

// line is the line of a top-level key, 0 when absent.
func (c *Config) line(key string) int { return c.lines[key] }

// Hooks are external commands per event.
type Hooks struct {
	PreGeneration []Hook `yaml:"preGeneration"`
	PreToolUse    []Hook `yaml:"preToolUse"`
	PostToolUse   []Hook `yaml:"postToolUse"`
}

// Hook is one command: {command: [argv…], tools: [names…], timeout: 5s},
// or, in postToolUse, a guard agent asked about the output: {guard:
// guard.yaml, tools: […]}.
type Hook struct {
	Command Argv     `yaml:"command"`
	Tools   []string `yaml:"tools"`
	Timeout Duration `yaml:"timeout"`
	// Guard is a guard agent file, relative to the config file.
	Guard string `yaml:"guard"`
	// GuardFile is the guard agent, loaded and checked by Load.
	GuardFile *Config `yaml:"-"`
	// Line is the entry's line in the file, for messages.
	Line int `yaml:"-"`
}

// UnmarshalYAML keeps the entry's line (unknown keys were refused by
// checkKeys before).
func (h *Hook) UnmarshalYAML(n *yaml.Node) error {
	type plain Hook
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*h = Hook(p)
	h.Line = n.Line
	return nil
}

// Argv is a command's words; a single string is one word (a script's
// path), never split by a shell.
type Argv []string

// UnmarshalYAML accepts a list of words or one string.
func (a *Argv) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*a = Argv{n.Value}
		return nil
	}
	var words []string
	if err := n.Decode(&words); err != nil {
		return fmt.Errorf("line %d: command must be a list of words, e.g. [./check.sh, --strict]", n.Line)
	}
	*a = words
	return nil
}

// LSP configures one language server; extensions are needed only for a
// language mm does not know (go and python are built in).
type LSP struct {
	Command     []string `yaml:"command"`
	RootMarkers []string `yaml:"rootMarkers"`
	Extensions  []string `yaml:"extensions"`
}

// MCPServer is one MCP server: a command (stdio, the default type) or a
// url (type: http).
type MCPServer struct {
	Name    string      `yaml:"name"`
	Type    string      `yaml:"type"`
	Command string      `yaml:"command"`
	Args    []string    `yaml:"args"`
	Env     []NameValue `yaml:"env"`
	URL     string      `yaml:"url"`
	Headers []NameValue `yaml:"headers"`
}

// NameValue is an environment variable or an HTTP header.
type NameValue struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// Duration accepts "30s", "3m".
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (write e.g. 30s or 3m)", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// Budget is a count or "off" (-1).
type Budget int

// UnmarshalYAML accepts a number or off.
func (b *Budget) UnmarshalYAML(n *yaml.Node) error {
	if n.Value == "off" || n.Value == "false" {
		*b = -1
		return nil
	}
	var i int
	if err := n.Decode(&i); err != nil {
		return fmt.Errorf("line %d: %q must be a number or off", n.Line, n.Value)
	}
	*b = Budget(i)
	return nil
}

// ErrInvalid marks a config the user must fix (exit code 2).
var ErrInvalid = errors.New("invalid config")

// builtIn is the Source of a config read from no file.
const builtIn = "built-in defaults"

// Find returns the config file to read: flag, else MM_CONFIG, else
// .mm/agent.yaml in dir, else ~/.config/mm/agent.yaml, else "". A
// workspace's .mm/agent.yaml is laid over the user's own file (LoadFor),
// which UserFile finds.
func Find(env Env, flag, dir string) string {
	if flag != "" {
		return flag
	}
	if path := env.Get("MM_CONFIG"); path != "" {
		return path
	}
	if ws := filepath.Join(dir, ".mm", "agent.yaml"); exists(ws) {
		return ws
	}
	return UserFile(env)
}

// UserDir is the user's own configuration directory, ~/.config/mm,
// whether it exists or not; "" without a home directory.
func UserDir(env Env) string {
	home, err := env.Home()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "mm")
}

// UserFile is the user's own ~/.config/mm/agent.yaml, "" when there is
// none.
func UserFile(env Env) string {
	if p, err := UserPath(env); err == nil && exists(p) {
		return p
	}
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Load reads path ("" = built-in defaults), checks it, and applies the
// environment overrides (MM_BASE_URL, MM_MODEL, MM_PROVIDER, MM_API_KEY).
func Load(env Env, path string) (*Config, error) {
	c := &Config{Source: builtIn}
	if path != "" {
		data, err := disk.Read(context.Background(), "", path, disk.MaxControl)
		if err != nil {
			return nil, fmt.Errorf("%w: cannot read %s: %v", ErrInvalid, path, err)
		}
		if err := Parse(data, c); err != nil {
			return nil, fmt.Errorf("%w: %s %v", ErrInvalid, path, err)
		}
		c.Source, c.data = path, data
		if c.SkillsDir != "" && !filepath.IsAbs(c.SkillsDir) {
			// skillsDir is relative to the config file, not to where mm runs.
			abs, _ := filepath.Abs(path)
			c.SkillsDir = filepath.Join(filepath.Dir(abs), c.SkillsDir)
		}
	}
	c.applyEnv(env)
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, c.Source, err)
	}
	if err := c.loadAgents(env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := c.loadGuards(env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return c, nil
}

// Parse decodes YAML into c; an unknown key is an error naming its line.
func Parse(data []byte, c *Config) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		return nil // empty file
	}
	if err := checkKeys(root.Content[0], reflect.TypeOf(*c), ""); err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  ")
		return errors.New(strings.TrimPrefix(msg, "yaml: "))
	}
	c.lines = map[string]int{}
	if top := root.Content[0]; top.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(top.Content); i += 2 {
			c.lines[top.Content[i].Value] = top.Content[i].Line
		}
	}
	c.keys = map[string]bool{}
	keyPaths(root.Content[0], "", c.keys)
	// `decision:` or `guard:` with nothing after it still says what the
	// file is.
	if _, ok := c.lines["decision"]; ok && c.Decision == nil {
		c.Decision = &DecisionModel{}
	}
	if _, ok := c.lines["guard"]; ok && c.Guard == nil {
		c.Guard = &Guard{}
	}
	return nil
}

// keyPaths adds the keys of the mappings under n to out, as dotted paths.
func keyPaths(n *yaml.Node, prefix string, out map[string]bool) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		path := prefix + n.Content[i].Value
		out[path] = true
		keyPaths(n.Content[i+1], path+".", out)
	}
}

// checkKeys walks the document against the struct so an unknown key is
// reported with its line and the keys that would be valid there.
func checkKeys(n *yaml.Node, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice {
		// a list of entries (hooks, risks): each is checked like a key
		for i, e := range n.Content {
			if err := checkKeys(e, t.Elem(), fmt.Sprintf("%s[%d].", strings.TrimSuffix(prefix, "."), i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.MappingNode || t.Kind() != reflect.Struct {
		return nil
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		fields[name] = f.Type
		names = append(names, name)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ft, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("line %d: unknown key %q%s", k.Line, prefix+k.Value, hint(k.Value, names))
		}
		if err := checkKeys(v, ft, prefix+k.Value+"."); err != nil {
			return err
		}
	}
	return nil
}

// hint names the valid key nearest to k (case, separators and small typos
// forgiven); a short list of keys is given whole, a long one never is —
// thirty names on one line help nobody, so a far-off top-level key gets no
// hint.
func hint(k string, names []string) string {
	norm := func(s string) string { return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s)) }
	best, bestD := "", -1
	for _, n := range names {
		d := textdist.Levenshtein(norm(k), norm(n))
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	switch {
	case bestD >= 0 && bestD <= max(1, len(norm(k))/3):
		return fmt.Sprintf(" — did you mean `%s`?", best)
	case len(names) <= 6:
		return " (valid here: " + strings.Join(names, ", ") + ")"
	}
	return ""
}

func (c *Config) applyEnv(env Env) {
	if v := env.Get("MM_BASE_URL"); v != "" {
		c.BaseURL = v
		c.envServer = true
	}
	if v := env.Get("MM_MODEL"); v != "" {
		c.Model = v
	}
	if v := env.Get("MM_PROVIDER"); v != "" {
		c.Provider = v
	}
	if c.APIKeyEnv != "" {
		c.APIKey = env.Get(c.APIKeyEnv)
		c.ownKey = c.APIKey
	}
	if v := env.Get("MM_API_KEY"); v != "" {
		c.APIKey = v
	}
}

// Providers mm knows how to talk to.
var Providers = []string{"llamacpp", "dmr", "ollama", "lmstudio", "vllm", "openai"}

func (c *Config) validate() error {
	if err := validateMCP(c.MCPServers); err != nil {
		return err
	}
	if c.Provider != "" {
		ok := false
		for _, p := range Providers {
			ok = ok || p == c.Provider
		}
		if !ok {
			return fmt.Errorf("provider %q is not one of %s", c.Provider, strings.Join(Providers, ", "))
		}
	}
	if c.BaseURL != "" && !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return fmt.Errorf("baseURL %q must start with http:// or https://", c.BaseURL)
	}
	if c.MaxTurns < 0 || c.PreviewLines < 0 || c.MaxOutput < 0 || c.ContextWindow < 0 {
		return errors.New("maxTurns, previewLines, maxOutput and contextWindow cannot be negative")
	}
	if err := c.validateHooks(); err != nil {
		return err
	}
	if _, ok := llm.LookupProfile(c.Profile); c.Profile != "" && c.Profile != "none" && !ok {
		return fmt.Errorf("profile %q is not one of %s (or none; leave it out to guess from the model id)", c.Profile, strings.Join(llm.ProfileNames(), ", "))
	}
	if err := c.Sandbox.validate(); err != nil {
		return err
	}
	switch c.Reasoning.Effort {
	case "", "none", "low", "medium", "high", "xhigh":
	default:
		return fmt.Errorf("reasoning.effort %q is not one of none, low, medium, high, xhigh", c.Reasoning.Effort)
	}
	return c.validateAgent()
}

// On reports a switch's value, with its default.
func On(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func validateMCP(servers []MCPServer) error {
	seen := map[string]bool{}
	for i, s := range servers {
		switch {
		case strings.TrimSpace(s.Name) == "":
			return fmt.Errorf("mcpServers[%d] needs a name", i)
		case seen[s.Name]:
			return fmt.Errorf("mcpServers: two servers are named %q", s.Name)
		case s.Type == "sse":
			return fmt.Errorf("mcpServers.%s: type sse is not supported yet — use type: http (streamable HTTP) or a command", s.Name)
		case s.Type != "" && s.Type != "stdio" && s.Type != "http":
			return fmt.Errorf("mcpServers.%s: type %q is not one of stdio, http", s.Name, s.Type)
		case s.Type == "http" && s.URL == "":
			return fmt.Errorf("mcpServers.%s: type http needs a url", s.Name)
		case s.Type != "http" && s.Command == "":
			return fmt.Errorf("mcpServers.%s needs a command (or type: http and a url)", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}
