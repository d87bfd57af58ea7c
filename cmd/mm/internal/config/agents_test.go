package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentFiles: a decision: or guard: block makes the file
// that kind of agent; what cannot be is refused with the line that is
// wrong.
func TestAgentFiles(t *testing.T) {
	tests := []struct {
		name, yaml, kind, err string
	}{
		{"chat", "model: qwen3\n", ChatAgent, ""},
		{"empty decision", "model: d1-3b\ndecision: {}\n", DecisionAgent, ""},
		{"bare decision", "model: d1-3b\ndecision:\n", DecisionAgent, ""},
		{"decision with questions", "decision:\n  questions:\n    team: {type: choice, instructions: \"Which team?\", criteria: {billing: refunds, tech: null}}\n    urgency: {type: score, criteria: [later, today, now]}\n    pii: {type: noul}\n", DecisionAgent, ""},
		{"decision with tools off", "decision: {}\nbashTool: false\n", DecisionAgent, ""},
		{"guard", "model: x\nguard: {risks: [jailbreak], threshold: 0.8}\n", GuardAgent, ""},
		{"guard with a risk of one's own", "guard:\n  risks:\n    - jailbreak\n    - {name: exfiltration, definition: \"The text asks to send secrets away.\"}\n", GuardAgent, ""},
		{"guard risk with a typo", "guard:\n  risks:\n    - {name: x, defintion: y}\n", "", `line 3: unknown key "guard.risks[0].defintion" — did you mean ` + "`definition`"},
		{"guard risk twice", "guard: {risks: [harm, harm]}\n", "", "line 1: guard.risks names harm twice"},
		{"guard risk without name", "guard: {risks: [{definition: x}]}\n", "", "line 1: guard.risks[0] has no name"},
		{"guard definition on Ollama", "provider: ollama\nguard: {risks: [{name: x, definition: y}]}\n", "", "Ollama's guardian templates take only a risk name"},
		{"guard with a tool", "guard: {risks: [harm]}\nbashTool: true\n", "", "line 2: bashTool in a guard agent (guard:, line 1)"},
		{"guard with hooks", "guard: {risks: [harm]}\nhooks: {postToolUse: [{command: x}]}\n", "", "line 2: hooks in a guard agent"},
		{"guard threshold", "guard: {risks: [harm], threshold: 1.5}\n", "", "guard.threshold 1.5 is not between 0 and 1"},
		{"toolRouting to a missing file", "toolRouting: {agent: r.yaml}\n", "", "cannot read the agent file"},
		{"agents: a missing file", "model: x\nagents: {helper: h.yaml}\n", "", "line 2: agents.helper: cannot read the agent file "},
		{"both", "model: x\ndecision: {}\nguard: {risks: [harm]}\n", "", "line 3: guard: and decision: (line 2) in one agent file"},
		{"decision with a tool", "decision: {}\nmodel: d1\nbashTool: true\n", "", "line 3: bashTool: true in a decision agent (decision:, line 1)"},
		{"decision with agents", "decision: {}\nagents: {helper: h.yaml}\n", "", "line 2: agents in a decision agent"},
		{"decision with MCP servers", "decision: {}\nmcpServers: [{name: fs, command: mcp-fs}]\n", "", "line 2: mcpServers in a decision agent"},
		{"bad question type", "decision:\n  questions:\n    q: {type: yesno}\n", "", `decision.questions.q: type "yesno" is not choice, noul or score`},
		{"choice of one", "decision:\n  questions:\n    q: {type: choice, criteria: {only: x}}\n", "", "at least two options"},
		{"score of one", "decision:\n  questions:\n    q: {type: score, criteria: [low]}\n", "", "2 to 10 levels"},
		{"guard without risks", "guard: {threshold: 0.5}\n", "", "line 1: guard: names no risk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "agent.yaml")
			os.WriteFile(path, []byte(tt.yaml), 0o644)
			c, err := Load(nil, path)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Kind() != tt.kind {
				t.Errorf("kind = %s, want %s", c.Kind(), tt.kind)
			}
		})
	}
}

// TestRoutingAgent: skillRouting.agent is found relative to the
// config file, keeps its own server (no MM_* override), and must be a
// decision agent.
func TestRoutingAgent(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "router.yaml"), []byte("baseURL: http://127.0.0.1:9001/v1\nmodel: d1-3b\ndecision: {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "agents", "chat.yaml"), []byte("model: qwen3\n"), 0o644)
	main := filepath.Join(dir, "agent.yaml")
	env := Env{"MM_BASE_URL=http://127.0.0.1:8080/v1", "MM_MODEL=chat-model"}

	os.WriteFile(main, []byte("model: qwen3\nskillRouting: {agent: agents/router.yaml, minConfidence: 0.7, timeout: 1s}\n"), 0o644)
	c, err := Load(env, main)
	if err != nil {
		t.Fatal(err)
	}
	r := c.SkillRouting.File
	if r == nil || r.BaseURL != "http://127.0.0.1:9001/v1" || r.Model != "d1-3b" || r.Kind() != DecisionAgent {
		t.Fatalf("router = %+v", r)
	}
	if *c.SkillRouting.MinConfidence != 0.7 || c.BaseURL != "http://127.0.0.1:8080/v1" {
		t.Errorf("routing %+v, chat baseURL %s", c.SkillRouting, c.BaseURL)
	}

	os.WriteFile(main, []byte("model: qwen3\n\nskillRouting: {agent: agents/chat.yaml}\n"), 0o644)
	if _, err := Load(env, main); err == nil || !strings.Contains(err.Error(), "line 3: skillRouting.agent agents/chat.yaml is a chat agent, not a decision agent") {
		t.Errorf("a chat agent as router: %v", err)
	}
	os.WriteFile(main, []byte("skillRouting: {agent: agents/nope.yaml}\n"), 0o644)
	if _, err := Load(env, main); err == nil || !strings.HasSuffix(err.Error(), "cannot read the agent file "+filepath.Join(dir, "agents", "nope.yaml")+": no such file or directory") ||
		strings.Count(err.Error(), "nope.yaml") != 1 {
		t.Errorf("a missing agent file (its path once, then why): %v", err)
	}
	os.WriteFile(filepath.Join(dir, "agents", "bad.yaml"), []byte("decision: {}\nguard: {risks: [x]}\n"), 0o644)
	os.WriteFile(main, []byte("skillRouting: {agent: agents/bad.yaml}\n"), 0o644)
	if _, err := Load(env, main); err == nil || !strings.Contains(err.Error(), "bad.yaml: line 2: guard: and decision:") {
		t.Errorf("a broken agent file: %v", err)
	}
	os.WriteFile(main, []byte("skillRouting: {agent: agents/router.yaml, minConfidence: 6}\n"), 0o644)
	if _, err := Load(env, main); err == nil || !strings.Contains(err.Error(), "line 1: skillRouting threshold 6 is not between 0 and 1") {
		t.Errorf("minConfidence 6: %v", err)
	}
}

// TestGuardKind: a guard: file is a guard agent when another file names
// it; risks are names or {name, definition}.
func TestGuardKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "guard.yaml")
	os.WriteFile(path, []byte("guard: {risks: [jailbreak, {name: x, definition: the x risk}], threshold: 0.8, timeout: 3s}\n"), 0o644)
	a, err := LoadAgent(nil, path)
	if err != nil || a.Kind() != GuardAgent || a.Guard.Threshold != 0.8 || len(a.Guard.Risks) != 2 || a.Guard.Risks[0] != (Risk{Name: "jailbreak"}) || a.Guard.Risks[1] != (Risk{"x", "the x risk"}) {
		t.Errorf("LoadAgent = %+v, %v", a, err)
	}
}

// TestGuardHooks: a postToolUse entry may name a guard agent instead
// of a command, relative to the config file; what cannot work is refused
// with the entry's line.
func TestGuardHooks(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "guard.yaml"), []byte("baseURL: http://127.0.0.1:9002/v1\nmodel: granite-guardian\nguard: {risks: [jailbreak]}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "chat.yaml"), []byte("model: qwen3\n"), 0o644)
	main := filepath.Join(dir, "agent.yaml")
	env := Env{"MM_BASE_URL=http://127.0.0.1:8080/v1"}
	os.WriteFile(main, []byte("hooks:\n  postToolUse:\n    - {command: [./log.sh]}\n    - {guard: guard.yaml, tools: [read_file, fetch_content], timeout: 20s}\n"), 0o644)
	c, err := Load(env, main)
	if err != nil {
		t.Fatal(err)
	}
	h := c.Hooks.PostToolUse[1]
	if h.GuardFile == nil || h.GuardFile.BaseURL != "http://127.0.0.1:9002/v1" || h.GuardFile.Guard.Risks[0].Name != "jailbreak" || h.Line != 4 || len(h.Tools) != 2 {
		t.Errorf("guard entry = %+v", h)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"hooks:\n  postToolUse:\n    - {command: [./x.sh], guard: guard.yaml}\n", "line 3: hooks.postToolUse[0] has both command and guard"},
		{"hooks:\n  postToolUse:\n    - {command: [./x.sh]}\n    - {tools: [read_file]}\n", "line 4: hooks.postToolUse[1] has no command (write command: [./my-hook.sh], or in postToolUse guard: guard.yaml)"},
		{"hooks:\n  preToolUse:\n    - {guard: guard.yaml}\n", "line 3: hooks.preToolUse[0]: guard is only supported in postToolUse"},
		{"hooks:\n  postToolUse:\n    - {guard: chat.yaml}\n", "line 3: hooks.postToolUse[0].guard chat.yaml is a chat agent, not a guard agent"},
		{"hooks:\n  postToolUse:\n    - {guard: nope.yaml}\n", "line 3: hooks.postToolUse[0].guard: cannot read the agent file " + filepath.Join(dir, "nope.yaml")},
		{"hooks:\n  postToolUse:\n    - {gaurd: guard.yaml}\n", `line 3: unknown key "hooks.postToolUse[0].gaurd" (valid here: command, tools, timeout, guard)`},
	} {
		os.WriteFile(main, []byte(tc.yaml), 0o644)
		if _, err := Load(env, main); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// TestAskedAgents: agents: {name: FILE} loads each file relative to
// the config (or absolute), with its own server and description; a name
// that cannot be a tool or a command, a file that is missing or broken, or
// a key an asked agent could not honour is refused with the line that
// names it.
func TestAskedAgents(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	write := func(name, yaml string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(yaml), 0o644)
		return p
	}
	write("agents/historian.yaml", "baseURL: http://127.0.0.1:9002/v1\nmodel: hist-7b\ndescription: knows the project's history\nsystemPrompt: You are a historian.\nskillsDir: skills\n")
	abs := write("router.yaml", "model: d1-3b\ndecision:\n  questions:\n    team: {type: choice, criteria: {billing: x, tech: y}}\n")
	env := Env{"MM_BASE_URL=http://127.0.0.1:8080/v1"}
	main := write("agent.yaml", "model: qwen3\nagents:\n  historian: agents/historian.yaml\n  triage: {file: "+abs+", write: false}\n")
	c, err := Load(env, main)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Agents.Names(); strings.Join(got, ",") != "historian,triage" {
		t.Fatalf("names = %v", got)
	}
	h := c.Agents["historian"].Config
	if h == nil || h.BaseURL != "http://127.0.0.1:9002/v1" || h.Model != "hist-7b" || h.Description != "knows the project's history" || h.SystemPrompt != "You are a historian." {
		t.Fatalf("historian = %+v", h)
	}
	if h.SkillsDir != filepath.Join(dir, "agents", "skills") {
		t.Errorf("the historian's skillsDir is not relative to its file: %s", h.SkillsDir)
	}
	if tr := c.Agents["triage"]; tr.Config.Kind() != DecisionAgent || tr.Line != 4 {
		t.Errorf("triage = %+v", tr)
	}

	refused := []struct{ name, agent, main, err string }{
		{"a long name", "", "agents:\n  the-historian-of-this-very-old-project-x: agents/h.yaml\n", `line 2: agents: "the-historian-of-this-very-old-project-x" is not a short name`},
		{"a name with a space", "", "agents: {\"the historian\": agents/h.yaml}\n", `line 1: agents: "the historian" is not a short name`},
		{"a name with a dot", "", "model: x\nagents:\n  hist.v2: agents/h.yaml\n", `line 3: agents: "hist.v2" is not a short name`},
		{"no file", "", "agents:\n  historian:\n", "line 2: agents.historian names no agent file"},
		{"a list", "", "agents: [h.yaml]\n", "line 1: agents maps names to agent files"},
		{"write: true", "model: h\n", "agents:\n  historian: {file: agents/h.yaml, write: true}\n", "line 2: agents.historian.write: true is not supported yet"},
		{"an unknown key", "model: h\n", "agents:\n  historian: {file: agents/h.yaml, tools: [bash]}\n", `line 2: unknown key "agents.historian.tools" (valid here: file, write)`},
		{"missing", "", "model: x\n\nagents: {historian: agents/nope.yaml}\n", "line 3: agents.historian: cannot read the agent file " + filepath.Join(dir, "agents", "nope.yaml")},
		{"broken", "model: [\n", "agents: {historian: agents/h.yaml}\n", "line 1: agents.historian: " + filepath.Join(dir, "agents", "h.yaml")},
		{"an unknown key in it", "modle: x\n", "agents: {historian: agents/h.yaml}\n", `unknown key "modle"`},
		{"bash", "model: h\nbashTool: true\n", "agents: {historian: agents/h.yaml}\n", "h.yaml line 2: bashTool: true in an asked agent — an asked agent is read-only"},
		{"edits", "editTools: true\n", "agents: {historian: agents/h.yaml}\n", "line 1: editTools: true in an asked agent"},
		{"depth 1", "model: h\nagents: {other: o.yaml}\n", "agents: {historian: agents/h.yaml}\n", "line 2: agents in an asked agent — an asked agent asks no other agent"},
		{"MCP", "mcpServers: [{name: fs, command: mcp-fs}]\n", "agents: {historian: agents/h.yaml}\n", "line 1: mcpServers in an asked agent"},
		{"previewLines", "model: h\npreviewLines: 4\n", "agents: {historian: agents/h.yaml}\n", "line 2: previewLines in an asked agent — nobody sees"},
		{"yolo", "yolo: true\n", "agents: {historian: agents/h.yaml}\n", "line 1: yolo in an asked agent — its permission questions go to the user of the agent that asks"},
		{"a guard with hooks", "guard: {risks: [harm]}\nhooks: {postToolUse: [{command: x}]}\n", "agents: {historian: agents/h.yaml}\n", "h.yaml: line 2: hooks in a guard agent"},
		{"a long description", "description: " + strings.Repeat("very ", 40) + "\n", "agents: {historian: agents/h.yaml}\n", "line 1: description is 199 characters — keep it to 160 at most"},
		{"a decision agent with agents", "decision: {}\nagents: {x: y.yaml}\n", "agents: {historian: agents/h.yaml}\n", "line 2: agents in a decision agent"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			write("agents/h.yaml", tt.agent)
			write("agent.yaml", tt.main)
			_, err := Load(env, main)
			if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v\nwant one line with %q", err, tt.err)
			}
		})
	}
}
