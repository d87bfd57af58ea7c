package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, yaml, err string
		check           func(t *testing.T, c *Config)
	}{
		{name: "canonical keys", yaml: `
provider: llamacpp
baseURL: http://127.0.0.1:8080/v1
model: qwen3.5-4b
sampling: {temperature: 0.0, top_p: 0.9, max_tokens: 4096, parallel_tool_calls: false}
watchdogTimeout: 30s
firstTokenTimeout: 3m
toolBudget: off
yolo: true
permissions: {allow: ["bash:git status*"], deny: []}
lsp:
  go: {command: [gopls], rootMarkers: [go.mod, go.work]}
`, check: func(t *testing.T, c *Config) {
			if c.Provider != "llamacpp" || c.Model != "qwen3.5-4b" || c.Sampling.MaxTokens != 4096 || *c.Sampling.TopP != 0.9 {
				t.Errorf("decoded %+v", c)
			}
			if time.Duration(c.FirstTokenTime) != 3*time.Minute || c.ToolBudget != -1 || !c.Yolo {
				t.Errorf("durations/budget/yolo: %v %v %v", c.FirstTokenTime, c.ToolBudget, c.Yolo)
			}
			if c.LSP["go"].Command[0] != "gopls" || c.Permissions.Allow[0] != "bash:git status*" {
				t.Errorf("lsp/permissions: %+v %+v", c.LSP, c.Permissions)
			}
		}},
		{name: "unknown top-level key names its line", yaml: "model: x\n\nmodle_name: y\n", err: `line 3: unknown key "modle_name"`},
		{name: "unknown nested key", yaml: "sampling:\n  temperature: 0\n  maxTokens: 10\n", err: "line 3: unknown key \"sampling.maxTokens\" — did you mean `max_tokens`?"},
		{name: "typo names the nearest key", yaml: "maxTurn: 3\n", err: "line 1: unknown key \"maxTurn\" — did you mean `maxTurns`?"},
		{name: "case and typo", yaml: "model: x\nMaxTrns: 3\n", err: "line 2: unknown key \"MaxTrns\" — did you mean `maxTurns`?"},
		{name: "far-off key lists nothing", yaml: "colourScheme: dark\n", err: "line 1: unknown key \"colourScheme\""},
		{name: "nested short list", yaml: "reasoning:\n  budget: 3\n", err: "line 2: unknown key \"reasoning.budget\" (valid here: effort)"},
		{name: "bad duration", yaml: "watchdogTimeout: soon\n", err: `line 1: "soon" is not a duration`},
		{name: "wrong type", yaml: "maxTurns: many\n", err: "line 1"},
		{name: "empty file", yaml: "", check: func(t *testing.T, c *Config) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Config
			err := Parse([]byte(tt.yaml), &c)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, &c)
		})
	}
}

func TestLoadEnvOverrides(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.yaml")
	os.WriteFile(path, []byte("provider: ollama\nbaseURL: http://127.0.0.1:11434/v1\nmodel: a\napiKeyEnv: MY_KEY\n"), 0o644)
	env := Env{"MM_BASE_URL=http://127.0.0.1:9999/v1", "MM_MODEL=b", "MM_PROVIDER=llamacpp", "MY_KEY=from-file-var"}
	c, err := Load(env, path)
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "http://127.0.0.1:9999/v1" || c.Model != "b" || c.Provider != "llamacpp" || c.APIKey != "from-file-var" {
		t.Errorf("overrides not applied: %+v", c)
	}
	env = append(env, "MM_API_KEY=direct")
	if c, _ = Load(env, path); c.APIKey != "direct" {
		t.Errorf("MM_API_KEY should win, got %q", c.APIKey)
	}
	env = append(env, "MM_PROVIDER=gpt5")
	if _, err := Load(env, path); err == nil || !strings.Contains(err.Error(), `provider "gpt5"`) {
		t.Errorf("bad provider: %v", err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	env := Env{"HOME=" + t.TempDir()}
	if got := Find(env, "", dir); got != "" {
		t.Errorf("no config: got %q", got)
	}
	os.MkdirAll(filepath.Join(dir, ".mm"), 0o755)
	ws := filepath.Join(dir, ".mm", "agent.yaml")
	os.WriteFile(ws, nil, 0o644)
	if got := Find(env, "", dir); got != ws {
		t.Errorf("workspace config: got %q", got)
	}
	env = append(env, "MM_CONFIG=/x.yaml")
	if got := Find(env, "", dir); got != "/x.yaml" {
		t.Errorf("MM_CONFIG: got %q", got)
	}
	if got := Find(env, "/flag.yaml", dir); got != "/flag.yaml" {
		t.Errorf("flag: got %q", got)
	}
}

// TestUnknownKeyIsOneShortLine: the line names the file, the line and the
// key, and never lists the thirty-odd top-level keys.
func TestUnknownKeyIsOneShortLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.yaml")
	os.WriteFile(path, []byte("model: x\nmaxTurn: 3\n"), 0o644)
	_, err := Load(nil, path)
	if err == nil {
		t.Fatal("an unknown key was accepted")
	}
	want := path + " line 2: unknown key \"maxTurn\" — did you mean `maxTurns`?"
	if got := strings.TrimPrefix(err.Error(), ErrInvalid.Error()+": "); got != want {
		t.Errorf("error = %q\nwant    %q", got, want)
	}
	for _, k := range []string{"colourScheme", "zzz", "hooksDir"} {
		err := Parse([]byte(k+": 1\n"), &Config{})
		if err == nil || strings.Contains(err.Error(), "previewLines") || strings.Count(err.Error(), ",") > 0 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", k, err)
		}
	}
}

func TestMCPServers(t *testing.T) {
	for _, tt := range []struct{ yaml, err string }{
		{yaml: "mcpServers:\n  - {name: files, command: /bin/mcp-files, args: [--ro], env: [{name: TOKEN, value: x}]}\n  - {name: web, type: http, url: http://127.0.0.1:9000/mcp, headers: [{name: Authorization, value: Bearer y}]}\n"},
		{yaml: "mcpServers:\n  - {command: /bin/x}\n", err: "mcpServers[0] needs a name"},
		{yaml: "mcpServers:\n  - {name: a, type: sse, url: http://x}\n", err: "type sse is not supported yet"},
		{yaml: "mcpServers:\n  - {name: a, type: http}\n", err: "type http needs a url"},
		{yaml: "mcpServers:\n  - {name: a}\n", err: "mcpServers.a needs a command"},
		{yaml: "mcpServers:\n  - {name: a, command: x}\n  - {name: a, command: y}\n", err: `two servers are named "a"`},
		{yaml: "mcpServers:\n  - {name: a, command: x, cwd: /tmp}\n", err: "cwd"},
	} {
		path := filepath.Join(t.TempDir(), "agent.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(nil, path)
		if tt.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.yaml, err)
			} else if len(c.MCPServers) != 2 || c.MCPServers[1].Headers[0].Value != "Bearer y" || c.MCPServers[0].Env[0].Name != "TOKEN" {
				t.Errorf("decoded %+v", c.MCPServers)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error = %v, want %q", tt.yaml, err, tt.err)
		}
	}
}
