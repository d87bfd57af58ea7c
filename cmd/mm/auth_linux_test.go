package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/internal/testenv"
)

// authMethods is initialize's authMethods as a client reads them.
type authMethods []struct {
	ID   string   `json:"id"`
	Type string   `json:"type"`
	Args []string `json:"args"`
}

func initialized(t *testing.T, r *acptest.Wire, caps string) authMethods {
	t.Helper()
	m := r.Initialize(caps)
	var res struct{ AuthMethods authMethods }
	if json.Unmarshal(m.Result, &res) != nil {
		t.Fatalf("initialize: %s", m.Line)
	}
	return res.AuthMethods
}

func newSessionIn(r *acptest.Wire, id, dir string) acptest.Msg {
	return r.Call(id, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
}

// TestACPStartsAnywhere: with no config, no home directory, no model
// server and no language server, `mm acp` — started as the registry's
// check starts it, TERM=dumb — answers initialize with the set-up as an
// auth method, answers session/new with auth_required and its one line,
// writes nothing but JSON-RPC on stdout, and exits 0 when stdin closes.
func TestACPStartsAnywhere(t *testing.T) {
	t.Parallel()
	isolate := noNetwork(t)
	dir := t.TempDir()
	r := startWire(t, dir, []string{"TERM=dumb", "PATH=" + t.TempDir()}, isolate)
	methods := initialized(t, r, `{"terminal":true,"fs":{"readTextFile":true,"writeTextFile":true},"_meta":{"terminal_output":true,"terminal-auth":true}}`)
	if len(methods) == 0 || methods[0].Type != "terminal" || strings.Join(methods[0].Args, " ") != "setup" {
		t.Errorf("authMethods = %+v, want the terminal set-up first", methods)
	}
	m := newSessionIn(r, "new", dir)
	if m.Error == nil || m.Error.Code != -32000 || !strings.Contains(m.Error.Message, "mm setup") || strings.Contains(m.Error.Message, "\n") {
		t.Errorf("session/new with nothing set up: %s", m.Line)
	}
	r.CheckSchema()
	if err := r.Close(); err != nil {
		t.Errorf("mm exited with %v at EOF, want 0; stderr:\n%s", err, r.Stderr)
	}
}

// TestACPAuthRequiredUntilSetUp: with no server configured and none
// answering, session/new answers auth_required, and so does authenticate;
// once the terminal step has saved a choice in the user's config —
// written here as mm setup writes it — authenticate succeeds and
// session/new opens a session, without restarting the agent.
func TestACPAuthRequiredUntilSetUp(t *testing.T) {
	t.Parallel()
	isolate := noNetwork(t)
	dir, home := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_STATE_HOME=" + t.TempDir()}
	r := startWire(t, dir, env, isolate)
	methods := initialized(t, r, `{"auth":{"terminal":true}}`)
	var ids []string
	for _, m := range methods {
		ids = append(ids, m.ID+":"+m.Type)
	}
	if got := strings.Join(ids, " "); got != "mm-setup:terminal mm-local-server:" {
		t.Errorf("authMethods = %s", got)
	}
	if m := newSessionIn(r, "new1", dir); m.Error == nil || m.Error.Code != -32000 {
		t.Errorf("session/new: %s", m.Line)
	}
	if m := r.Call("auth1", "authenticate", map[string]any{"methodId": "mm-setup"}); m.Error == nil || m.Error.Code != -32000 {
		t.Errorf("authenticate before the set-up: %s", m.Line)
	}

	testenv.WriteFile(t, filepath.Join(home, ".config", "mm", "agent.yaml"), "provider: llamacpp\nbaseURL: http://127.0.0.1:8080/v1\nmodel: qwen3-4b\n")
	if m := r.Call("auth2", "authenticate", map[string]any{"methodId": "mm-setup"}); m.Error != nil || string(m.Result) != "{}" {
		t.Errorf("authenticate after the set-up: %s", m.Line)
	}
	if m := newSessionIn(r, "new2", dir); m.Error != nil {
		t.Errorf("session/new after the set-up: %s", m.Line)
	}
	r.CheckSchema()
	if err := r.Close(); err != nil {
		t.Errorf("mm exited with %v", err)
	}
}
