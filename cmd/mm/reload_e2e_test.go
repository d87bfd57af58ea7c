package main

import (
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPConfigReread: the config is read again at each session/new. A
// config broken when the editor started the agent, then fixed, works for
// the next session without a restart; a changed config (or a changed
// agent file it names) applies to new sessions while a running session
// keeps the one it was built with; a config broken again answers
// session/new with its line while the open sessions go on. Every message
// (the errors included) validates against the 2026-11 schema.
func TestACPConfigReread(t *testing.T) {
	t.Parallel()
	home := t.TempDir() // the user's own config, outside the workspace
	cfg := filepath.Join(home, "agent.yaml")
	testenv.WriteFile(t, cfg, "systemPrompt: alpha\nmaxTurn: 3\n")
	w := newWorld(t, "config_reread", "XDG_STATE_HOME="+t.TempDir(), "MM_CONFIG="+cfg)
	p := w.serve(acptest.Options{})
	p.Initialize(w.ctx)
	newSession := func() (sdk.SessionId, error) {
		r, err := p.Conn.NewSession(w.ctx, sdk.NewSessionRequest{Cwd: w.dir, McpServers: []sdk.McpServer{}})
		return r.SessionId, err
	}
	if _, err := newSession(); err == nil || !strings.Contains(err.Error(), "maxTurns") {
		t.Fatalf("broken config: session/new = %v", err)
	}

	testenv.WriteFile(t, cfg, "systemPrompt: alpha\nmaxTurns: 3\n") // fixed in the editor
	a, err := newSession()
	if err != nil {
		t.Fatalf("fixed config: session/new = %v", err)
	}
	testenv.WriteFile(t, cfg, "systemPrompt: beta\nmaxTurns: 3\n")
	b, err := newSession()
	if err != nil {
		t.Fatal(err)
	}
	// An agent file the config names counts too.
	testenv.WriteFile(t, filepath.Join(home, "historian.yaml"), "description: one\nsystemPrompt: h\n")
	testenv.WriteFile(t, cfg, "systemPrompt: gamma\nagents: {historian: historian.yaml}\n")
	c, err := newSession()
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, filepath.Join(home, "historian.yaml"), "description: two\nsystemPrompt: h\n")
	d, err := newSession()
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, cfg, "systemPrompt: delta\nbaseURL: [\n") // broken again
	if _, err := newSession(); err == nil || !strings.Contains(err.Error(), "agent.yaml") {
		t.Errorf("broken again: session/new = %v", err)
	}
	for _, id := range []sdk.SessionId{a, b, c, d} {
		if _, err := p.Prompt(w.ctx, id, "hi"); err != nil {
			t.Fatalf("prompt %s: %v", id, err)
		}
	}
	reqs := w.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range []string{"alpha", "beta", "gamma", "gamma"} {
		if got := reqs[i].Messages[0].Content; got != want {
			t.Errorf("session %d: system prompt %q, want %q", i+1, got, want)
		}
	}
	var tools []string
	for _, r := range reqs[2:] {
		var desc string
		for _, tl := range r.Tools {
			if tl.Name == "ask_historian" {
				desc = tl.Description
			}
		}
		tools = append(tools, desc)
	}
	if !strings.Contains(tools[0], "one") || !strings.Contains(tools[1], "two") {
		t.Errorf("ask_historian descriptions %q: the agent file change did not reach the new session", tools)
	}
}

// TestACPConfigRereadTrust: the re-read goes through workspace trust. A
// workspace .mm/agent.yaml's agents: key is ignored until the user runs
// mm trust; the next session of the running agent then has the agent,
// and a change to the agent file makes the config untrusted again for
// the session after. Every message validates against the 2026-11 schema.
func TestACPConfigRereadTrust(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "config_reread", "XDG_STATE_HOME="+t.TempDir())
	w.write(".mm/historian.yaml", "description: one\nsystemPrompt: h\n")
	w.write(".mm/agent.yaml", "agents: {historian: historian.yaml}\n")
	p := w.serve(acptest.Options{})
	ask := func() bool {
		t.Helper()
		p.open()
		p.turn("hi")
		reqs := w.srv.Requests()
		for _, tl := range reqs[len(reqs)-1].Tools {
			if tl.Name == "ask_historian" {
				return true
			}
		}
		return false
	}
	if ask() {
		t.Fatal("an untrusted workspace config gave ask_historian")
	}
	if _, stderr, code := w.line("", "trust", "--yes"); code != 0 {
		t.Fatalf("mm trust: exit %d: %s", code, stderr)
	}
	if !ask() {
		t.Error("trusted while the agent ran: the next session has no ask_historian")
	}
	w.write(".mm/historian.yaml", "description: two\nsystemPrompt: h\n")
	if ask() {
		t.Error("the agent file changed after trust: ask_historian still offered")
	}
}
