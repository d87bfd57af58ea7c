package app

import (
	"context"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/permit/childenv"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/mcp"
)

// mcpConnect connects the config's MCP servers and more (the editor's)
// for one session, in parallel and bounded; the caller closes the set.
func (a *App) mcpConnect(ctx context.Context, cwd string, more []mcp.Server) *mcp.Set {
	servers := append(fromConfig(a.cfg.MCPServers), more...)
	if len(servers) == 0 {
		return &mcp.Set{}
	}
	var reserved []string
	for _, t := range a.registry([]string{cwd}, nil).Tools() {
		reserved = append(reserved, t.Name())
	}
	return mcp.Connect(ctx, mcp.Options{
		Servers:   servers,
		Reserved:  reserved,
		Env:       a.childEnviron(),
		Dir:       cwd,
		MaxOutput: a.maxOutput(),
		Logger:    a.log,
		Version:   a.version(),
	})
}

// acpMCP is acp.Options.MCP: the editor's servers after the config's.
func (a *App) acpMCP(ctx context.Context, cwd string, servers []sdk.McpServer) ([]tools.Tool, []string, func()) {
	more, notes := fromACP(servers)
	if a.known != nil {
		// The editor's servers' secrets are masked and kept from
		// commands like the config's (mcpSecrets).
		a.known.Add(nil, mcpSecrets(more))
	}
	set := a.mcpConnect(ctx, cwd, more)
	return set.Tools(), append(notes, set.Notes...), set.Close
}

func fromConfig(cs []config.MCPServer) []mcp.Server {
	var out []mcp.Server
	for _, c := range cs {
		s := mcp.Server{Name: c.Name}
		if c.Type == "http" {
			s.URL = c.URL
			s.Headers = map[string]string{}
			for _, h := range c.Headers {
				s.Headers[h.Name] = h.Value
			}
		} else {
			s.Command, s.Args = c.Command, c.Args
			for _, e := range c.Env {
				s.Env = append(s.Env, e.Name+"="+e.Value)
			}
		}
		out = append(out, s)
	}
	return out
}

// fromACP converts session/new's servers; an SSE server (not advertised)
// is a note.
func fromACP(ss []sdk.McpServer) ([]mcp.Server, []string) {
	var out []mcp.Server
	var notes []string
	for _, s := range ss {
		switch {
		case s.Stdio != nil:
			m := mcp.Server{Name: s.Stdio.Name, Command: s.Stdio.Command, Args: s.Stdio.Args}
			for _, e := range s.Stdio.Env {
				m.Env = append(m.Env, e.Name+"="+e.Value)
			}
			out = append(out, m)
		case s.Http != nil:
			m := mcp.Server{Name: s.Http.Name, URL: s.Http.Url, Headers: map[string]string{}}
			for _, h := range s.Http.Headers {
				m.Headers[h.Name] = h.Value
			}
			out = append(out, m)
		case s.Sse != nil:
			notes = append(notes, "MCP server "+s.Sse.Name+" uses SSE, which mm does not support yet (use streamable HTTP); its tools are not offered")
		default:
			notes = append(notes, "an MCP server of an unknown transport was ignored")
		}
	}
	return out, notes
}

// mcpSecrets are the secrets MCP servers are configured with: the values
// of their env entries and HTTP headers whose name says secret
// (GITHUB_TOKEN, API_KEY, Authorization…). A command can read a server's environment
// from /proc (the server is mm's child, not protected like mm), so these
// are masked in every output and kept from commands, like the user's key.
func mcpSecrets(servers []mcp.Server) []string {
	var out []string
	for _, s := range servers {
		for _, kv := range s.Env {
			if name, v, _ := strings.Cut(kv, "="); childenv.SecretName(name) && v != "" {
				out = append(out, v)
			}
		}
		for name, v := range s.Headers {
			if !childenv.SecretName(name) && !strings.Contains(strings.ToLower(name), "auth") {
				continue
			}
			if _, token, ok := strings.Cut(v, " "); ok && len(token) >= 8 {
				v = token // "Bearer <token>": the token itself
			}
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
