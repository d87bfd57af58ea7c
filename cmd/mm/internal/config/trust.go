package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/permit/trust"
)

// A workspace's own .mm/agent.yaml comes with the repository: whoever
// wrote it — the project, a pull request, the model through a file it
// wrote — is not the user. Until the user trusts it, its keys that run a
// program, relax a permission, or send data or credentials elsewhere are
// ignored; the others apply. Trust is bound to content: the hash of every
// file that takes part (Parts), recorded in mm's state directory, never in
// the repository, so any change makes the config untrusted again.

// Untrusted is one key a workspace config may set only once trusted.
type Untrusted struct {
	Key string
	// Why says what the key could do, for docs/security.md and `mm trust`.
	Why   string
	set   func(*Config) bool
	clear func(*Config)
}

// UntrustedKeys are the keys an untrusted workspace config cannot set,
// in the order docs/security.md's table lists them. Every other key applies.
var UntrustedKeys = []Untrusted{
	{"yolo", "runs every edit and command without asking",
		func(c *Config) bool { return c.Yolo }, func(c *Config) { c.Yolo = false }},
	{"permissions.allow", "lets commands and edits run without asking",
		func(c *Config) bool { return len(c.Permissions.Allow) > 0 }, func(c *Config) { c.Permissions.Allow = nil }},
	{"hooks", "runs programs (and guard agents) at each step",
		func(c *Config) bool {
			return len(c.Hooks.PreGeneration)+len(c.Hooks.PreToolUse)+len(c.Hooks.PostToolUse) > 0
		}, func(c *Config) { c.Hooks = Hooks{} }},
	{"mcpServers", "starts programs, or connects to URLs, at every session",
		func(c *Config) bool { return len(c.MCPServers) > 0 }, func(c *Config) { c.MCPServers = nil }},
	{"lsp", "starts language server programs",
		func(c *Config) bool { return len(c.LSP) > 0 }, func(c *Config) { c.LSP = nil }},
	{"provider", "picks the server your code is sent to (openai: api.openai.com)",
		func(c *Config) bool { return c.Provider != "" }, func(c *Config) { c.Provider = "" }},
	{"baseURL", "sends your code and prompts to another server",
		func(c *Config) bool { return c.BaseURL != "" }, func(c *Config) { c.BaseURL = "" }},
	{"apiKeyEnv", "sends one of your environment variables (a token) to the server as its key",
		func(c *Config) bool { return c.APIKeyEnv != "" }, func(c *Config) { c.APIKeyEnv = "" }},
	{"bashEnv.keep", "lets secret variables through to commands",
		func(c *Config) bool { return len(c.BashEnv.Keep) > 0 }, func(c *Config) { c.BashEnv.Keep = nil }},
	{"fetchContentTool", "lets the model fetch URLs (it can send what it read)",
		func(c *Config) bool { return c.FetchContentTool != nil && *c.FetchContentTool }, func(c *Config) { c.FetchContentTool = nil }},
	{"agents", "other agent files, with their own servers and keys",
		func(c *Config) bool { return len(c.Agents) > 0 }, func(c *Config) { c.Agents = nil }},
	{"skillRouting", "a decision agent file, with its own server and key",
		func(c *Config) bool { return c.SkillRouting.Agent != "" }, func(c *Config) { c.SkillRouting = Routing{} }},
	{"toolRouting", "a decision agent file, with its own server and key",
		func(c *Config) bool { return c.ToolRouting.Agent != "" }, func(c *Config) { c.ToolRouting = ToolRouting{} }},
}

// Ignorable names the untrusted keys c sets.
func (c *Config) Ignorable() []string {
	var keys []string
	for _, u := range UntrustedKeys {
		if u.set(c) {
			keys = append(keys, u.Key)
		}
	}
	return keys
}

// restrict clears the untrusted keys of c.
func (c *Config) restrict() {
	for _, u := range UntrustedKeys {
		if u.set(c) {
			u.clear(c)
		}
	}
}

// Parts are the files that take part in the config, absolute, sorted: the
// file itself, the agent files it names (and theirs), and what the
// programs it starts — hooks, MCP servers, language servers — load from
// the workspace: a command with a slash, every argument naming an
// existing file or directory under dir (`python .mm/server.py`,
// `--config=tools/lint.toml`), and the package a `-m` module lives in
// (`python3 -m hookpkg.check` loads hookpkg/). A directory counts as every
// file below it. Programs found on PATH are the user's.
func (c *Config) Parts(dir string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	named := func(w string) (string, bool) {
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		_, err := os.Stat(p)
		return p, err == nil && within(dir, p)
	}
	argv := func(words []string) {
		for i, w := range words {
			if p, ok := named(w); ok || (i == 0 && strings.ContainsRune(w, '/')) {
				add(p)
			}
			if _, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
				if p, ok := named(v); ok {
					add(p)
				}
			}
			if w == "-m" && i+1 < len(words) {
				if p, ok := module(dir, words[i+1]); ok {
					add(p)
				}
			}
		}
	}
	c.each(func(a *Config) {
		if a.Source == "" {
			return // built-in defaults and the environment: no file
		}
		add(absPath(a.Source))
		if a.Base != "" {
			add(absPath(a.Base)) // the user's own, under a workspace's
		}
		for _, hs := range [][]Hook{a.Hooks.PreGeneration, a.Hooks.PreToolUse, a.Hooks.PostToolUse} {
			for _, h := range hs {
				argv(h.Command)
			}
		}
		for _, s := range a.MCPServers {
			if s.Command != "" {
				argv(append([]string{s.Command}, s.Args...))
			}
		}
		for _, l := range a.LSP {
			argv(l.Command)
		}
	})
	sort.Strings(out)
	return out
}

// module is where Python finds the top-level package or module of a
// dotted module name run from dir (`-m a.b` loads a/ or a.py): the whole
// package, since importing a.b runs a/__init__.py and whatever it imports.
// A module found on Python's own path instead is the user's; one from dir
// shadows it, so dir's candidate counts either way.
func module(dir, name string) (string, bool) {
	top, _, _ := strings.Cut(name, ".")
	if top == "" || strings.ContainsAny(top, "/\\") {
		return "", false
	}
	for _, p := range []string{filepath.Join(dir, top), filepath.Join(dir, top+".py")} {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	// Not there yet: the package the model would create is the part
	// (hashed as missing, and a write there runs later).
	return filepath.Join(dir, top), true
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// read are the bytes of c's files and of the agent files it names, by
// absolute path, as they were parsed.
func (c *Config) read() map[string][]byte {
	out := map[string][]byte{}
	c.each(func(a *Config) {
		if a.data != nil {
			out[absPath(a.Source)] = a.data
		}
	})
	return out
}

// Trust is the trust state of the config mm loaded.
type Trust struct {
	// Workspace: the config is the workspace's own .mm/agent.yaml (the
	// only kind that needs trust); false for the user's own config.
	Workspace bool
	// Trusted: the user trusted exactly these contents.
	Trusted bool
	// Ignored are the untrusted keys the config sets that were ignored,
	// and what it tried to relax of the user's own config (layer).
	Ignored []string
	// Relaxes are what the workspace config relaxes of the user's own
	// once trusted ("sandbox: off (yours: landlock)"): mm trust shows
	// them with the untrusted keys.
	Relaxes []string
	// Parts and Hash are what trusting records (Parts, Hash).
	Parts []string
	Hash  string
	// Unbound says why trust cannot be bound to the files (too many under
	// .mm/, one unreadable); Record refuses with it.
	Unbound error
	// Full is the config as it would apply once trusted (nil when the
	// full config does not load); mm trust shows it.
	Full *Config
	// Path is the config file; Store the trust file in the state
	// directory.
	Path, Store string
}

// Warning is the one ⚠ line saying what was ignored and how to trust it,
// "" when nothing was.
func (t *Trust) Warning() string {
	if t == nil || !t.Workspace || t.Trusted || len(t.Ignored) == 0 {
		return ""
	}
	return fmt.Sprintf("⚠ .mm/agent.yaml is not trusted: %s ignored — run `mm trust` here (or /trust in the editor) if you wrote it", strings.Join(t.Ignored, ", "))
}

// LoadFor finds and loads the config of a session in dir (Find, Load)
// and applies workspace trust: a workspace's own .mm/agent.yaml is laid
// over the user's own config (layer) and loses its untrusted keys unless
// the user trusted its current contents (recorded in trustFile; ""
// trusts nothing). This is the one function that loads a config for a
// workspace: start-up and every later re-read go through it.
//
// hashes keeps the digests of the files trust covers between readings
// (an editor reads the config again at every session): a file is read
// again only when it changed. nil keeps none.
func LoadFor(env Env, flag, dir, trustFile string, hashes *trust.Cache) (*Config, *Trust, error) {
	path := Find(env, flag, dir)
	ws := flag == "" && env.Get("MM_CONFIG") == "" && path != "" && sameFile(path, filepath.Join(dir, ".mm", "agent.yaml"))
	if !ws {
		c, err := Load(env, path)
		return c, &Trust{Trusted: true, Path: path, Store: trustFile, Full: c}, err
	}
	t := &Trust{Workspace: true, Path: absPath(path), Store: trustFile}
	// The user's own config is the base the workspace's is laid over.
	base, err := Load(env, UserFile(env))
	if err != nil {
		return nil, t, err
	}
	full, err := Load(env, path)
	t.Full = full
	if err == nil {
		t.Hash, t.Unbound = trustHash(full, dir, &t.Parts, hashes)
		t.Trusted = trust.Trusted(trustFile, t.Path, t.Hash)
		_, t.Relaxes = layer(base, full, false)
		if t.Trusted {
			c, _ := layer(base, full, true)
			c, err := checkLayered(c)
			return c, t, err
		}
	}
	// Untrusted (or not loadable as a whole: a planted agent file that
	// does not parse must not keep the rest from loading): load the file
	// without its untrusted keys, so nothing they name is read.
	c, rerr := loadRestricted(env, path)
	if rerr != nil {
		return nil, t, rerr
	}
	c, refused := layer(base, c, false)
	t.Ignored = append(slices.Clone(c.ignored), refused...)
	c, err = checkLayered(c)
	return c, t, err
}

// trustHash lists in parts what trusting full covers — its files and the
// programs it names (Parts), and every file under .mm/ — and hashes them
// with the bytes full was parsed from. An error says why trust cannot be
// bound (hash "").
func trustHash(full *Config, dir string, parts *[]string, hashes *trust.Cache) (string, error) {
	extra, err := trust.Files(dir)
	if err != nil {
		*parts = full.Parts(dir)
		return "", err
	}
	all := full.Parts(dir)
	for _, p := range extra {
		if !slices.Contains(all, p) {
			all = append(all, p)
		}
	}
	sort.Strings(all)
	*parts = all
	return hashes.Hash(all, full.read())
}

// checkLayered checks a config laid over another as a whole: each file
// was valid alone, but together they could be two kinds of agent.
func checkLayered(c *Config) (*Config, error) {
	if err := c.validate(); err != nil {
		base := c.Base
		if base == "" {
			base = builtIn
		}
		return nil, fmt.Errorf("%w: %s laid over %s: %v", ErrInvalid, c.Source, base, err)
	}
	return c, nil
}

// loadRestricted is Load with the untrusted keys cleared before anything
// they name is read or validated.
func loadRestricted(env Env, path string) (*Config, error) {
	c := &Config{Source: path}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: cannot read %s: %v", ErrInvalid, path, err)
	}
	if err := Parse(data, c); err != nil {
		return nil, fmt.Errorf("%w: %s %v", ErrInvalid, path, err)
	}
	c.ignored = c.Ignorable()
	c.restrict()
	if c.SkillsDir != "" && !filepath.IsAbs(c.SkillsDir) {
		c.SkillsDir = filepath.Join(filepath.Dir(absPath(path)), c.SkillsDir)
	}
	c.applyEnv(env)
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalid, c.Source, err)
	}
	if err := c.loadGuards(env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return c, nil
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 != nil || err2 != nil {
		return absPath(a) == absPath(b)
	}
	return os.SameFile(fa, fb)
}

// Record records that the user trusts t's config as it is now. It refuses
// when the files changed since t was read: the user trusts what was shown.
func (t *Trust) Record() error {
	if t.Store == "" {
		return errors.New("no state directory to record trust in (set XDG_STATE_HOME)")
	}
	if t.Unbound != nil {
		return t.Unbound
	}
	if now, err := trust.Hash(t.Parts, nil); err != nil || now != t.Hash {
		return errors.New("the files changed while you were deciding — nothing was trusted; run it again")
	}
	return trust.Record(t.Store, t.Path, t.Hash)
}

// Summary says what trusting t would let take effect and which files the
// trust covers, for `mm trust` and /trust. t.Full must be set (the
// workspace config loads as a whole). Only what the file itself sets is
// named — not what the user's environment (MM_BASE_URL, MM_PROVIDER) put
// in the loaded config. Every name and command in it comes from the
// repository, so the whole text is shown through permit.Visible and
// bounded (permit.Bound): a file name cannot erase the lines that say
// what trust enables.
func (t *Trust) Summary() string {
	var b strings.Builder
	var keys []string
	for _, k := range t.Full.Ignorable() {
		if t.Full.keys == nil || t.Full.keys[k] {
			keys = append(keys, k)
		}
	}
	var relaxes []string
	for _, r := range t.Relaxes {
		if k, _, _ := strings.Cut(r, ":"); !slices.Contains(keys, k) {
			relaxes = append(relaxes, r)
		}
	}
	fmt.Fprintf(&b, "%s is not trusted.\n", t.Path)
	if len(keys)+len(relaxes) == 0 {
		b.WriteString("It sets nothing that needs trust; trusting it changes nothing now.\n")
	} else {
		b.WriteString("Once trusted, these take effect:\n")
		for _, k := range keys {
			fmt.Fprintf(&b, "  %s: %s\n", k, untrustedValue(t.Full, k))
		}
		for _, r := range relaxes {
			fmt.Fprintf(&b, "  %s — relaxes your own config\n", r)
		}
	}
	b.WriteString("The trust covers these files, as they are now:\n")
	for _, p := range t.Parts {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	return permit.Shown(b.String())
}

// untrustedValue shows what an untrusted key would do, in a few words.
func untrustedValue(c *Config, key string) string {
	why := ""
	for _, u := range UntrustedKeys {
		if u.Key == key {
			why = " — " + u.Why
		}
	}
	var v string
	switch key {
	case "yolo":
		v = "true"
	case "baseURL":
		v = c.BaseURL
	case "provider":
		v = c.Provider
	case "apiKeyEnv":
		v = "$" + c.APIKeyEnv
	case "permissions.allow":
		v = strings.Join(c.Permissions.Allow, ", ")
	case "bashEnv.keep":
		v = strings.Join(c.BashEnv.Keep, ", ")
	case "mcpServers":
		var ss []string
		for _, s := range c.MCPServers {
			if s.URL != "" {
				ss = append(ss, s.Name+" ("+s.URL+")")
			} else {
				ss = append(ss, s.Name+" ("+strings.Join(append([]string{s.Command}, s.Args...), " ")+")")
			}
		}
		v = strings.Join(ss, ", ")
	case "hooks":
		var ss []string
		for _, hs := range [][]Hook{c.Hooks.PreGeneration, c.Hooks.PreToolUse, c.Hooks.PostToolUse} {
			for _, h := range hs {
				if h.Guard != "" {
					ss = append(ss, "guard "+h.Guard)
				} else {
					ss = append(ss, strings.Join(h.Command, " "))
				}
			}
		}
		v = strings.Join(ss, ", ")
	case "lsp":
		var ss []string
		for name, l := range c.LSP {
			ss = append(ss, name+" ("+strings.Join(l.Command, " ")+")")
		}
		v = strings.Join(ss, ", ")
	case "agents":
		v = strings.Join(c.Agents.Names(), ", ")
	case "skillRouting":
		v = c.SkillRouting.Agent
	case "toolRouting":
		v = c.ToolRouting.Agent
	case "fetchContentTool":
		v = "true"
	}
	return v + why
}
