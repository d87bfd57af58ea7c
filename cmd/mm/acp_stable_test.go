package main

import (
	"errors"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// The stable surface of the 2026-11 schema that mm served last: session
// deletion, message ids on chunks, tool names, the boolean thinking
// switch. Each test runs the built binary and checks every message it
// wrote against the schema.

// TestACPSessionDelete: session/delete removes a saved session that is
// open, and one that is only saved; neither is listed nor loadable after,
// and an unknown id is refused with its name.
func TestACPSessionDelete(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "one"}, {Content: "two"}}})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env := mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir())
	ctx := testenv.Context(t)
	p := startAgentProcess(t, dir, env)
	init, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if init.AgentCapabilities.SessionCapabilities.Delete == nil {
		t.Errorf("sessionCapabilities.delete not advertised: %+v", init.AgentCapabilities.SessionCapabilities)
	}
	var ids []sdk.SessionId
	for _, text := range []string{"first", "second"} {
		ns, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.prompt(ctx, ns.SessionId, text); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, ns.SessionId)
	}
	// The second is closed: deleting it reaches the store alone.
	if _, err := p.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: ids[1]}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := p.conn.UnstableDeleteSession(ctx, sdk.UnstableDeleteSessionRequest{SessionId: id}); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
	}
	list, err := p.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
	if err != nil || len(list.Sessions) != 0 {
		t.Errorf("list after delete = %+v, %v; want none", list.Sessions, err)
	}
	for _, id := range ids {
		_, err := p.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []sdk.McpServer{}})
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("load of deleted %s: %v, want -32602", id, err)
		}
	}
	if _, err := p.prompt(ctx, ids[0], "again"); err == nil {
		t.Errorf("a prompt to the deleted open session was answered")
	}
	_, err = p.conn.UnstableDeleteSession(ctx, sdk.UnstableDeleteSessionRequest{SessionId: "sess_nothere"})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 {
		t.Errorf("delete of an unknown session: %v, want -32602", err)
	}
	p.stop(t)
	checkSchema(t, p.sent.String(), p.stdout.String())
}
