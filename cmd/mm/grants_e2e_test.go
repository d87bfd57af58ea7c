package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// What a mode, a grant and a rule allow, tried from the outside against
// the built binary: every call either covered by what the user saw, or
// asked, or refused.

// drainAsked empties the client's question channel for the whole test,
// for tests that ask more questions than it holds.
func drainAsked(t *testing.T, c *testClient) {
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-c.asked:
			case <-done:
				return
			}
		}
	}()
}

// TestACPPlanModeRefusesMCPTool: plan mode promises that nothing is
// written or run, so an MCP tool — which may do anything — is refused
// without a question (it was asked, and run when allowed).
func TestACPPlanModeRefusesMCPTool(t *testing.T) {
	bin := mcpServer(t)
	srv := scenario(t, "mcp_echo")
	dir := t.TempDir()
	p := startAgent(t, dir, mmEnv(t, srv))
	ctx := testContext(t)
	id := p.sessionWith(t, ctx, dir, sdk.ClientCapabilities{}, []sdk.McpServer{stdioServer("greeter", bin)})
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.prompt(ctx, id, "echo something"); err != nil {
		t.Fatal(err)
	}
	if _, perms := p.client.snapshot(); len(perms) != 0 {
		t.Errorf("plan mode asked %d questions for an MCP tool: %q", len(perms), *perms[0].ToolCall.Title)
	}
	if got := lastToolResult(t, srv.Requests()); !strings.Contains(got, "plan mode is read-only") || strings.Contains(got, "echo: hello") {
		t.Errorf("the MCP tool in plan mode gave the model %q", got)
	}
}

// TestACPAcceptEditsFetchSaveAsks: accept-edits lets edits through, not
// the network: a fetch that saves its page asks (as a network request
// and a write), and a refusal sends no request at all.
func TestACPAcceptEditsFetchSaveAsks(t *testing.T) {
	var hits atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<html><body><main><p>secret page</p></main></body></html>")
	}))
	defer page.Close()
	srv := scenarioText(t, fmt.Sprintf(`
steps:
  - tool_calls:
      - name: fetch_content
        args: {url: %q, output: page.md}
  - content: "Done."
`, page.URL+"/doc"))
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	writeFile(t, cfg, "fetchContentTool: true\n")
	p := startAgent(t, dir, mmEnv(t, srv, "MM_CONFIG="+cfg))
	p.client.choose = sdk.PermissionOptionKindRejectOnce
	ctx := testContext(t)
	id := p.session(t, ctx, dir)
	if _, err := p.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "accept-edits"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.prompt(ctx, id, "save the page"); err != nil {
		t.Fatal(err)
	}
	_, perms := p.client.snapshot()
	if len(perms) != 1 || !strings.Contains(*perms[0].ToolCall.Title, page.URL) {
		t.Fatalf("accept-edits: %d questions for a fetch that saves, want 1 naming the URL", len(perms))
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the refused fetch still sent %d requests", n)
	}
}
