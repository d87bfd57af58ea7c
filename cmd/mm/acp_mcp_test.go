package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/tools/mcp/mcptest"
)

var (
	mcpServerOnce sync.Once
	mcpServerBin  string
	mcpServerErr  error
)

// mcpServer builds the tiny stdio MCP server of the tests (the SDK's
// server side), once.
func mcpServer(t *testing.T) string {
	t.Helper()
	mcpServerOnce.Do(func() {
		mcpServerBin, mcpServerErr = testenv.Build("../../tools/mcp/testdata/mcpserver", "mcpserver")
	})
	if mcpServerErr != nil {
		t.Fatal("building the MCP server:", mcpServerErr)
	}
	return mcpServerBin
}

func stdioServer(name, command string, args ...string) sdk.McpServer {
	return sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: command, Args: append([]string{}, args...), Env: []sdk.EnvVariable{}}}
}

// lastToolResult is the tool message of the model's last request.
func lastToolResult(t *testing.T, reqs []llmtest.Recorded) string {
	t.Helper()
	msgs := reqs[len(reqs)-1].Messages
	m := msgs[len(msgs)-1]
	if m.Role != "tool" {
		t.Fatalf("the last message is %s, not a tool result", m.Role)
	}
	return m.Content
}

// withGreeter is a world on the named scenario and an editor whose
// session has the greeter MCP server (stdio).
func withGreeter(t *testing.T, name string) (*world, *editor) {
	t.Helper()
	bin := mcpServer(t)
	w := newWorld(t, name)
	p := w.serve(acptest.Options{})
	p.open(stdioServer("greeter", bin))
	return w, p
}

// TestACPMCPStdio: a stdio MCP server of the editor's (session/new's
// mcpServers) is connected, its tool is offered as greeter_echo, the call
// asks permission, its result reaches the model's next request, a server
// that cannot start is one ⚠ line, and session/close leaves no server
// process.
func TestACPMCPStdio(t *testing.T) {
	t.Parallel()
	bin := mcpServer(t)
	w := newWorld(t, "mcp_echo")
	p := w.start(acptest.Options{})
	id := p.open(stdioServer("greeter", bin), stdioServer("broken", bin, "-fail"))
	servers := children(p.Cmd.Process.Pid, "mcpserver")
	if len(servers) == 0 {
		t.Fatal("no MCP server child of mm")
	}
	p.turn("echo something")
	reqs := w.srv.Requests()
	if !hasTool(reqs[0].Tools, "greeter_echo") || hasTool(reqs[0].Tools, "broken_echo") {
		t.Errorf("tools offered: %+v", reqs[0].Tools)
	}
	if got := lastToolResult(t, reqs); got != "echo: hello from the model" {
		t.Errorf("the model got %q", got)
	}
	updates, perms := p.Updates(), p.Permissions()
	if len(perms) != 1 || !strings.Contains(*perms[0].ToolCall.Title, "greeter: echo") {
		t.Errorf("permission requests: %+v", perms)
	}
	if msg := acptest.MessageText(updates); !strings.Contains(msg, `⚠ MCP server "broken" is off`) || !strings.Contains(msg, "could not start: it exited (it said: mcpserver: GREETER") {
		t.Errorf("no ⚠ line for the server that failed:\n%s", msg)
	}
	if _, err := p.Conn.CloseSession(w.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	for _, pid := range servers {
		if alive(pid) {
			t.Errorf("the MCP server (pid %d) outlived its session", pid)
		}
	}
}

// TestACPMCPHTTP: an HTTP MCP server of the editor's, headers included.
func TestACPMCPHTTP(t *testing.T) {
	t.Parallel()
	server := mcptest.Server()
	var sawAuth bool
	var mu sync.Mutex
	ts := httptest.NewServer(mcpsdk.NewStreamableHTTPHandler(func(r *http.Request) *mcpsdk.Server {
		mu.Lock()
		sawAuth = sawAuth || r.Header.Get("Authorization") == "Bearer t0ken"
		mu.Unlock()
		return server
	}, nil))
	defer ts.Close()
	w := newWorld(t, "mcp_http")
	p := w.serve(acptest.Options{})
	p.open(sdk.McpServer{Http: &sdk.McpServerHttpInline{Type: "http", Name: "web", Url: ts.URL, Headers: []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer t0ken"}}}})
	p.turn("echo over http")
	if got := lastToolResult(t, w.srv.Requests()); got != "echo: over http" {
		t.Errorf("the model got %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !sawAuth {
		t.Error("the configured header was not sent")
	}
}

// TestACPMCPCrash: a server that crashes mid-call is a repair text for
// the model and a ⚠ note; the turn ends normally.
func TestACPMCPCrash(t *testing.T) {
	t.Parallel()
	w, p := withGreeter(t, "mcp_crash")
	p.endTurn("use the greeter")
	if got := lastToolResult(t, w.srv.Requests()); !strings.Contains(got, `the MCP server "greeter" stopped`) || !strings.Contains(got, "carry on without them") {
		t.Errorf("the model got %q", got)
	}
	if msg := p.answer(); !strings.Contains(msg, `⚠ MCP server "greeter" stopped`) {
		t.Errorf("no ⚠ note:\n%s", msg)
	}
}

// TestLineModeMCPFromConfig: agent.yaml's mcpServers serve line mode,
// where no editor names any, and the server is gone when mm exits.
func TestLineModeMCPFromConfig(t *testing.T) {
	t.Parallel()
	// This test's own name for the server: other tests run the same
	// binary meanwhile, and pgrep must find this one's alone.
	bin := filepath.Join(t.TempDir(), "greeter-of-TestLineModeMCPFromConfig")
	if err := os.Symlink(mcpServer(t), bin); err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, "mcp_echo")
	w.write(".mm/agent.yaml", "mcpServers:\n  - {name: greeter, command: "+bin+"}\n")
	w.trust()
	w.lineOK("", "-p", "echo something", "--yes")
	if got := lastToolResult(t, w.srv.Requests()); got != "echo: hello from the model" {
		t.Errorf("the model got %q", got)
	}
	if out, _ := exec.Command("pgrep", "-f", bin).Output(); len(out) > 0 {
		t.Errorf("MCP server processes left after mm exited: %s", out)
	}
}
