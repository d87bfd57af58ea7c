package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// A workspace's .mm/agent.yaml is laid over the user's own config, never
// put in its place. Taking the first file found let a repository whose
// file held only `maxTurns: 5` drop the user's deny rules, hooks, sandbox
// and server: the user's config is trusted and the repository's is
// not, so the repository's may add to it but not take from it.
//
// What the workspace file writes is laid key by key over the user's
// config (or the built-in defaults when the user has none):
//
//   - a setting (maxTurns, sampling.top_p, …) replaces the user's;
//   - lists of rules and of things to run add up: permissions, bashEnv,
//     hooks, mcpServers, lsp and agents — a workspace server or language
//     of the same name replaces the user's;
//   - untrusted, the keys of UntrustedKeys are ignored (the user's stay),
//     and the keys that guard the user (tightening) may only make mm
//     stricter: sandbox only towards namespaces (off, landlock, on,
//     namespaces) and its network only off, a tool only off;
//   - trusted, the workspace may relax those too — `mm trust` shows it
//     first — but the user's deny rules and dropped variables stay: a
//     deny rule says "never", and a repository the user trusts for its
//     hooks has not been asked to lift it.
//
// The model server and its key go together: a workspace that names
// another server (provider, baseURL) gets the key its own apiKeyEnv
// names, or none — never the user's key for the user's server.

// layering is one laying of a workspace config over a base.
type layering struct {
	out, ws, base *Config
	trusted       bool
	// refused are what an untrusted workspace tried to relax, as the ⚠
	// line names them ("sandbox: off (yours: landlock)").
	refused []string
}

// layerRules say how the workspace's key at a path combines with the
// user's, where replacing it would be wrong; every other key replaces.
var layerRules = map[string]func(l *layering){
	"permissions.allow": func(l *layering) { l.out.Permissions.Allow = union(l.out.Permissions.Allow, l.ws.Permissions.Allow) },
	"permissions.deny":  func(l *layering) { l.out.Permissions.Deny = union(l.out.Permissions.Deny, l.ws.Permissions.Deny) },
	"bashEnv.keep":      func(l *layering) { l.out.BashEnv.Keep = union(l.out.BashEnv.Keep, l.ws.BashEnv.Keep) },
	"bashEnv.drop":      func(l *layering) { l.out.BashEnv.Drop = union(l.out.BashEnv.Drop, l.ws.BashEnv.Drop) },
	"hooks": func(l *layering) {
		h, w := &l.out.Hooks, l.ws.Hooks
		h.PreGeneration = slices.Concat(h.PreGeneration, w.PreGeneration)
		h.PreToolUse = slices.Concat(h.PreToolUse, w.PreToolUse)
		h.PostToolUse = slices.Concat(h.PostToolUse, w.PostToolUse)
	},
	"mcpServers": func(l *layering) {
		var out []MCPServer
		for _, s := range l.out.MCPServers {
			if !slices.ContainsFunc(l.ws.MCPServers, func(w MCPServer) bool { return w.Name == s.Name }) {
				out = append(out, s)
			}
		}
		l.out.MCPServers = append(out, l.ws.MCPServers...)
	},
	"lsp": func(l *layering) {
		m := maps.Clone(l.out.LSP)
		if m == nil {
			m = map[string]LSP{}
		}
		maps.Copy(m, l.ws.LSP)
		l.out.LSP = m
	},
	"agents": func(l *layering) {
		m := maps.Clone(l.out.Agents)
		if m == nil {
			m = Agents{}
		}
		maps.Copy(m, l.ws.Agents)
		l.out.Agents = m
	},
	// The agent file was loaded relative to the workspace's file: it
	// comes with its name.
	"skillRouting.agent": func(l *layering) {
		l.out.SkillRouting.Agent, l.out.SkillRouting.File = l.ws.SkillRouting.Agent, l.ws.SkillRouting.File
	},
	"toolRouting.agent": func(l *layering) {
		l.out.ToolRouting.Agent, l.out.ToolRouting.File = l.ws.ToolRouting.Agent, l.ws.ToolRouting.File
	},
	"provider":  func(l *layering) { l.out.Provider = l.ws.Provider; l.key() },
	"baseURL":   func(l *layering) { l.out.BaseURL = l.ws.BaseURL; l.key() },
	"apiKeyEnv": func(l *layering) { l.key() },
	"sandbox": func(l *layering) {
		out, ws := &l.out.Sandbox, l.ws.Sandbox
		scalar := !l.ws.keys["sandbox.use"] && !l.ws.keys["sandbox.network"]
		if scalar || l.ws.keys["sandbox.use"] {
			if !l.trusted && strength(ws.Use) < strength(out.Want()) {
				l.refuse("sandbox", offOr(ws.Use), out.Want())
			} else if out.Use = ws.Use; !out.On() {
				out.Network = "" // no sandbox: no network of its own either
			}
		}
		if l.ws.keys["sandbox.network"] {
			if !l.trusted && ws.NetworkOn() && !out.NetworkOn() {
				l.refuse("sandbox.network", "on", "off")
			} else {
				out.Network = ws.Network
			}
		}
	},
	"bashTool":         func(l *layering) { l.toggle("bashTool", &l.out.BashTool, l.ws.BashTool, true) },
	"editTools":        func(l *layering) { l.toggle("editTools", &l.out.EditTools, l.ws.EditTools, true) },
	"planTool":         func(l *layering) { l.toggle("planTool", &l.out.PlanTool, l.ws.PlanTool, true) },
	"fetchContentTool": func(l *layering) { l.toggle("fetchContentTool", &l.out.FetchContentTool, l.ws.FetchContentTool, false) },
}

// layer lays ws, a workspace's .mm/agent.yaml as loaded (whole when
// trusted, without its untrusted keys when not), over base, the user's
// own config or the built-in defaults. It returns the config in use and
// what ws tried to relax of base and was refused (only when untrusted).
func layer(base, ws *Config, trusted bool) (*Config, []string) {
	out := *base
	// Nothing of base's is shared with the result: the rules append to
	// and copy into these.
	out.Permissions = Permissions{Allow: slices.Clone(base.Permissions.Allow), Deny: slices.Clone(base.Permissions.Deny)}
	out.BashEnv = BashEnv{Keep: slices.Clone(base.BashEnv.Keep), Drop: slices.Clone(base.BashEnv.Drop)}
	out.Source, out.Base = ws.Source, ""
	if base.Source != builtIn {
		out.Base = base.Source
	}
	out.lines, out.keys, out.ignored, out.data = ws.lines, ws.keys, ws.ignored, ws.data
	l := &layering{out: &out, ws: ws, base: base, trusted: trusted}
	l.walk(reflect.ValueOf(&out).Elem(), reflect.ValueOf(ws).Elem(), "")
	return &out, l.refused
}

// walk copies into dst the keys ws sets under prefix, by the rules.
func (l *layering) walk(dst, src reflect.Value, prefix string) {
	t := dst.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		path := prefix + name
		if name == "" || name == "-" || !l.ws.keys[path] || !l.trusted && l.ignored(path) {
			continue
		}
		if rule, ok := layerRules[path]; ok {
			rule(l)
			continue
		}
		if ft := t.Field(i).Type; ft.Kind() == reflect.Struct && ft.NumField() > 0 && ft.Field(0).Tag.Get("yaml") != "" {
			l.walk(dst.Field(i), src.Field(i), path+".") // a block of settings: key by key
			continue
		}
		dst.Field(i).Set(src.Field(i))
	}
}

// ignored reports whether path is, or is under, a key the untrusted
// workspace file set and lost (UntrustedKeys): the user's value stays.
func (l *layering) ignored(path string) bool {
	for _, k := range l.ws.ignored {
		if path == k || strings.HasPrefix(path, k+".") {
			return true
		}
	}
	return false
}

// key takes the workspace's key with its server: a key is for the
// server it was configured with. Your MM_API_KEY goes only to your own
// server — the one MM_BASE_URL names, or the same as your config's —
// never to one the workspace names, which gets the key of its own
// apiKeyEnv, or none.
func (l *layering) key() {
	same := (!l.ws.keys["baseURL"] || l.ws.BaseURL == l.base.BaseURL) && (!l.ws.keys["provider"] || l.ws.Provider == l.base.Provider)
	switch {
	case (l.ws.envServer || same) && l.ws.keys["apiKeyEnv"]:
		l.out.APIKeyEnv, l.out.APIKey = l.ws.APIKeyEnv, l.ws.APIKey
	case l.ws.envServer || same:
		// the user's own server: the user's key stays
	default:
		l.out.APIKeyEnv, l.out.APIKey = l.ws.APIKeyEnv, l.ws.ownKey
	}
}

// toggle switches a tool as the workspace says; untrusted, it may only
// switch it off.
func (l *layering) toggle(key string, dst **bool, ws *bool, def bool) {
	if !l.trusted && !On(*dst, def) && On(ws, def) {
		l.refuse(key, "true", "false")
		return
	}
	*dst = ws
}

func (l *layering) refuse(key, theirs, yours string) {
	l.refused = append(l.refused, fmt.Sprintf("%s: %s (yours: %s)", key, theirs, yours))
}

func offOr(v string) string {
	if v == "" {
		return "off"
	}
	return v
}

// union is a followed by the entries of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
