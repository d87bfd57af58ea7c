package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/mcp/mcptest"
	"github.com/mm-agent/mm/tools/workspace"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverBin is testdata/mcpserver, built once.
var serverBin string

func TestMain(m *testing.M) {
	bin, err := testenv.Build("./testdata/mcpserver", "mcpserver")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the test MCP server:", err)
		os.Exit(1)
	}
	serverBin = bin
	os.Exit(m.Run())
}

// env is a disk workspace whose policy allows everything, or asks ask.
func env(t *testing.T, ask permit.Asker) tools.Env {
	t.Helper()
	w, err := workspace.New(workspace.Options{Cwd: t.TempDir(), Policy: permit.NewPolicy(ask == nil, nil, nil), Ask: ask})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func connectTest(t *testing.T, opts Options) *Set {
	t.Helper()
	opts.Env = []string{"PATH=" + os.Getenv("PATH")}
	set := Connect(context.Background(), opts)
	t.Cleanup(set.Close)
	return set
}

func find(t *testing.T, set *Set, name string) tools.Tool {
	t.Helper()
	for _, tl := range set.Tools() {
		if tl.Name() == name {
			return tl
		}
	}
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name())
	}
	t.Fatalf("no tool %s; tools: %v; notes: %v", name, names, set.Notes)
	return nil
}

func run(t *testing.T, tl tools.Tool, e tools.Env, args string) tools.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := tl.Run(ctx, e, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", tl.Name(), err)
	}
	return res
}

func TestStdioTools(t *testing.T) {
	set := connectTest(t, Options{Servers: []Server{{Name: "Greeter Bot", Command: serverBin}}})
	if len(set.Notes) > 0 {
		t.Fatalf("notes: %v", set.Notes)
	}
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name())
	}
	if got := strings.Join(names, " "); got != "greeter_bot_crash greeter_bot_echo greeter_bot_fail greeter_bot_hang greeter_bot_picture" {
		t.Errorf("tool names = %s", got)
	}
	echo := find(t, set, "greeter_bot_echo")
	if d := echo.Description(); len(d) > 200 || !strings.HasPrefix(d, "Echo the text back.") {
		t.Errorf("description not trimmed to the budget (%d): %q", len(d), d)
	}
	var schema map[string]any
	if err := json.Unmarshal(echo.Schema(), &schema); err != nil || schema["type"] != "object" || schema["$schema"] != nil {
		t.Errorf("schema = %s", echo.Schema())
	}
	e := env(t, nil)
	if res := run(t, echo, e, `{"text":"hi"}`); res.IsError || res.Text != "echo: hi" {
		t.Errorf("echo = %+v", res)
	}
	if res := run(t, find(t, set, "greeter_bot_picture"), e, `{}`); res.IsError || !strings.Contains(res.Text, "a red dot") || !strings.Contains(res.Text, "[image (image/png") {
		t.Errorf("picture = %+v", res)
	}
	if res := run(t, find(t, set, "greeter_bot_fail"), e, `{}`); !res.IsError || !strings.Contains(res.Text, "the greeting service is down") || res.Warning != "" {
		t.Errorf("fail = %+v", res)
	}
	if res := run(t, echo, e, `{"text": 3}`); !res.IsError || !strings.Contains(res.Text, `has type "integer", want "string"`) {
		t.Errorf("bad arguments = %+v", res)
	}
	if res := run(t, echo, e, `[1]`); !res.IsError || !strings.Contains(res.Text, "must be one JSON object") {
		t.Errorf("not an object = %+v", res)
	}
}

// TestStableNames: the same servers give byte-identical tools at every
// start (the prompt prefix stays cacheable).
func TestStableNames(t *testing.T) {
	dump := func() string {
		set := connectTest(t, Options{Servers: []Server{{Name: "a", Command: serverBin}, {Name: "a", Command: serverBin}}})
		var b strings.Builder
		for _, tl := range set.Tools() {
			fmt.Fprintf(&b, "%s %s %s\n", tl.Name(), tl.Description(), tl.Schema())
		}
		return b.String()
	}
	first := dump()
	if first != dump() {
		t.Error("tools differ between two starts")
	}
	if !strings.Contains(first, "a_echo ") || !strings.Contains(first, "a_echo_2 ") {
		t.Errorf("duplicate names not made unique:\n%s", first)
	}
}

func TestPermission(t *testing.T) {
	set := connectTest(t, Options{Servers: []Server{{Name: "g", Command: serverBin}}})
	asked := 0
	e := env(t, func(_ context.Context, a tools.Approval) (permit.Answer, error) {
		asked++
		if a.Tool != "g_echo" || a.Key != "g_echo" {
			t.Errorf("approval = %+v", a)
		}
		return permit.AllowAlways, nil
	})
	echo := find(t, set, "g_echo")
	run(t, echo, e, `{"text":"1"}`)
	run(t, echo, e, `{"text":"2"}`)
	if asked != 1 {
		t.Errorf("asked %d times; an always answer is remembered per tool", asked)
	}
	declined := env(t, func(context.Context, tools.Approval) (permit.Answer, error) { return permit.RejectOnce, nil })
	if res := run(t, echo, declined, `{"text":"x"}`); !res.IsError || !strings.Contains(res.Text, "was not run") {
		t.Errorf("declined = %+v", res)
	}
}

func TestCrashMidCall(t *testing.T) {
	set := connectTest(t, Options{Servers: []Server{{Name: "g", Command: serverBin}}})
	e := env(t, nil)
	res := run(t, find(t, set, "g_crash"), e, `{}`)
	if !res.IsError || !strings.Contains(res.Text, `MCP server "g" stopped`) || !strings.Contains(res.Warning, "stopped") {
		t.Errorf("crash = %+v", res)
	}
	res = run(t, find(t, set, "g_echo"), e, `{"text":"after"}`)
	if !res.IsError || !strings.Contains(res.Text, "cannot be used") {
		t.Errorf("a call after the crash = %+v", res)
	}
}

func TestHang(t *testing.T) {
	set := connectTest(t, Options{Servers: []Server{{Name: "g", Command: serverBin}}, CallTimeout: 300 * time.Millisecond})
	res := run(t, find(t, set, "g_hang"), env(t, nil), `{}`)
	if !res.IsError || !strings.Contains(res.Text, "did not answer within 300ms") || res.Warning == "" {
		t.Errorf("hang = %+v", res)
	}
}

func TestCancelDuringCall(t *testing.T) {
	set := connectTest(t, Options{Servers: []Server{{Name: "g", Command: serverBin}}})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := find(t, set, "g_hang").Run(ctx, env(t, nil), json.RawMessage(`{}`)); err == nil {
		t.Error("a cancelled call must return the context's error")
	}
}

func TestMalformedResult(t *testing.T) {
	set := connectTest(t, Options{Servers: []Server{{Name: "broken", Command: serverBin, Args: []string{"-malformed"}}}})
	res := run(t, find(t, set, "broken_echo"), env(t, nil), `{}`)
	if !res.IsError || !strings.Contains(res.Text, "cannot read") || !strings.Contains(res.Warning, "malformed") {
		t.Errorf("malformed = %+v", res)
	}
}

func TestStartFailures(t *testing.T) {
	set := connectTest(t, Options{
		StartTimeout: time.Second,
		Servers: []Server{
			{Name: "good", Command: serverBin},
			{Name: "missing", Command: filepath.Join(t.TempDir(), "nope")},
			{Name: "fails", Command: serverBin, Args: []string{"-fail"}},
			{Name: "silent", Command: "sleep", Args: []string{"30"}},
		},
	})
	if len(set.Notes) != 3 {
		t.Fatalf("notes = %q, want one per failed server", set.Notes)
	}
	joined := strings.Join(set.Notes, "\n")
	testenv.WantIn(t, "notes", joined, `"missing" is off`, `GREETER_TOKEN is not set`, `"silent" is off: could not start within 1s`)
	find(t, set, "good_echo")
}

// TestCloseLeavesNoProcess: Close ends the server and what it started.
func TestCloseLeavesNoProcess(t *testing.T) {
	set := Connect(context.Background(), Options{Servers: []Server{{Name: "g", Command: serverBin}}})
	if len(set.conns) != 1 {
		t.Fatalf("notes: %v", set.Notes)
	}
	pid := set.conns[0].cmd.Process.Pid
	set.Close()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the server (pid %d) is still there after Close", pid)
	}
}

func TestHTTP(t *testing.T) {
	srv := mcptest.Server()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			return nil
		}
		return srv
	}, nil))
	defer ts.Close()
	set := connectTest(t, Options{Servers: []Server{{Name: "web", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}}}})
	if res := run(t, find(t, set, "web_echo"), env(t, nil), `{"text":"over http"}`); res.IsError || res.Text != "echo: over http" {
		t.Errorf("echo = %+v", res)
	}
	bad := connectTest(t, Options{StartTimeout: 2 * time.Second, Servers: []Server{{Name: "web", URL: ts.URL}}})
	if len(bad.Notes) != 1 || len(bad.Tools()) != 0 {
		t.Errorf("without the header: notes %v, tools %d", bad.Notes, len(bad.Tools()))
	}
}

func TestEmptySet(t *testing.T) {
	var s Set
	s.Close() // a session without servers closes an empty set
	if len(s.Tools()) != 0 {
		t.Error("tools in an empty set")
	}
}
