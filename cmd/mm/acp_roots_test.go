package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPAdditionalDirectories is a session over two roots, tried as an
// attacker would. The first root's config is trusted; the second comes
// with a .mm/agent.yaml whose hook would leave a mark — it is not read,
// trusted or not. In yolo mode the model reads and writes the second
// root as the first; a relative path stays relative to cwd; a file
// outside both is refused; a file of the second root that runs later
// (.envrc) is asked as one of the first is, and so is a file of the
// first root that a link in the second (.nvimrc) makes run later — both
// refused here; a link in the first root that leads to the second root's
// git hooks is refused without a question.
// session/list reports the roots, and the binary's every message is valid.
func TestACPAdditionalDirectories(t *testing.T) {
	t.Parallel()
	dir, second, outside := t.TempDir(), t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "maxTurns: 8\n")
	writeFile(t, filepath.Join(second, "lib.txt"), "the second root's file\n")
	writeFile(t, filepath.Join(second, ".mm", "agent.yaml"), "hooks:\n  preGeneration:\n    - {command: [sh, -c, \"touch "+filepath.Join(second, "hooked")+"\"]}\n")
	os.MkdirAll(filepath.Join(second, ".git", "hooks"), 0o755)
	writeFile(t, filepath.Join(outside, "secret.txt"), "not yours\n")
	if err := os.Symlink(filepath.Join(second, ".git", "hooks", "pre-commit"), filepath.Join(dir, "link.txt")); err != nil {
		t.Skip("no symlinks:", err)
	}
	// Neovim started in the second root runs its .nvimrc: a file of the
	// first root it links to runs later too.
	writeFile(t, filepath.Join(dir, "notes2.txt"), "plain\n")
	os.Symlink(filepath.Join(dir, "notes2.txt"), filepath.Join(second, ".nvimrc"))
	write := func(path, content string) llmtest.ToolCall {
		return llmtest.ToolCall{Name: "write_file", Args: map[string]any{"path": path, "content": content}}
	}
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{
			{Name: "read_file", Args: map[string]any{"path": filepath.Join(second, "lib.txt")}},
			{Name: "read_file", Args: map[string]any{"path": filepath.Join(outside, "secret.txt")}},
			{Name: "read_file", Args: map[string]any{"path": "notes2.txt"}}, // read before it is written
		}},
		{ToolCalls: []llmtest.ToolCall{
			write(filepath.Join(second, "notes.md"), "ordinary\n"),
			write(filepath.Join(second, ".envrc"), "touch pwned\n"),
			write("rel.txt", "relative\n"),
			write("notes2.txt", "vim.cmd('!touch pwned')\n"),
		}},
		// A write refused as its path streams ends the model's message
		// there: on its own.
		{ToolCalls: []llmtest.ToolCall{write("link.txt", "#!/bin/sh\ntouch pwned\n")}},
		{Content: "Done."},
		// After session/load with the second root, then without it.
		{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": filepath.Join(second, "lib.txt")}}}},
		{Content: "Read."},
		{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": filepath.Join(second, "lib.txt")}}}},
		{Content: "Refused."},
	}})
	t.Cleanup(srv.Close)
	env := trusted(t, dir, mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
	ctx := testenv.Context(t)
	p := startMM(t, dir, env, acptest.Options{})
	if p.Initialize(ctx).AgentCapabilities.SessionCapabilities.AdditionalDirectories == nil {
		t.Error("sessionCapabilities.additionalDirectories not advertised")
	}
	ns := p.Open(ctx, sdk.NewSessionRequest{Cwd: dir, AdditionalDirectories: []string{second}})
	if _, err := p.Conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: "yolo"}); err != nil {
		t.Fatal(err)
	}
	p.Choose(sdk.PermissionOptionKindRejectOnce)
	// The model is told of the second root; mentions and attached files
	// may be in either root, never outside.
	prompt := []sdk.ContentBlock{
		sdk.TextBlock("set things up with @" + filepath.Join(second, "lib.txt") + " and @" + filepath.Join(outside, "secret.txt")),
		sdk.ResourceLinkBlock("lib.txt", "file://"+filepath.Join(second, "lib.txt")),
	}
	if _, err := p.Conn.Prompt(ctx, sdk.PromptRequest{SessionId: ns.SessionId, Prompt: prompt}); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if asked := reqs[0].Last().Content; !strings.Contains(asked, "Also in the workspace: "+second+"\n") ||
		!strings.Contains(asked, "[attached file: "+filepath.Join(second, "lib.txt")+"]") || !strings.Contains(asked, "secret.txt is outside the workspace") {
		t.Errorf("the first request's prompt:\n%s\nwant the second root named, its file attached, the outside one refused", asked)
	}
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	read := reqs[1].Messages
	if got := read[len(read)-3].Content; !strings.Contains(got, "the second root's file") {
		t.Errorf("reading the second root: %q", got)
	}
	if got := read[len(read)-2].Content; !strings.Contains(got, "outside the workspace") || strings.Contains(got, "not yours") {
		t.Errorf("reading outside both roots: %q", got)
	}
	perms := p.Permissions()
	var titles []string
	for _, q := range perms {
		titles = append(titles, *q.ToolCall.Title)
	}
	if len(perms) != 2 || !strings.Contains(titles[0], ".envrc runs later") || !strings.Contains(titles[1], ".nvimrc is a link to it") {
		t.Errorf("questions in yolo = %q, want two: the second root's .envrc, and the first root's file its .nvimrc links to", titles)
	}
	if got := readFile(t, filepath.Join(dir, "notes2.txt")); got != "plain\n" {
		t.Errorf("notes2.txt written although the user refused: %q", got)
	}
	for _, f := range []string{filepath.Join(second, ".envrc"), filepath.Join(second, ".git", "hooks", "pre-commit"), filepath.Join(second, "hooked"), filepath.Join(second, "rel.txt")} {
		if exists(f) {
			t.Errorf("%s exists", f)
		}
	}
	if readFile(t, filepath.Join(second, "notes.md")) != "ordinary\n" || readFile(t, filepath.Join(dir, "rel.txt")) != "relative\n" {
		t.Error("the ordinary writes did not land where they were meant to")
	}
	// Each root is confined on its own: a link from one into another is
	// a link out of its root.
	if told := lastToolText(srv); !strings.Contains(told, "link.txt leads out of the workspace") {
		t.Errorf("the model was not told why link.txt was not written:\n%s", told)
	}
	list, err := p.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
	if err != nil || len(list.Sessions) != 1 || !slices.Equal(list.Sessions[0].AdditionalDirectories, []string{second}) {
		t.Errorf("session/list = %+v, %v; want the session with its second root", list.Sessions, err)
	}
	_, err = p.Conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: dir, AdditionalDirectories: []string{"relative/dir"}, McpServers: []sdk.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("a relative additional directory: %v, want refused", err)
	}
	p.Stop()

	// session/load's list is the session's whole list: given, the second
	// root is there again; omitted (the open session loaded again), it
	// is not.
	q := startMM(t, dir, env, acptest.Options{})
	for _, tc := range []struct {
		dirs []string
		want string
	}{{[]string{second}, "the second root's file"}, {nil, "outside the workspace"}} {
		q.Load(ctx, sdk.LoadSessionRequest{SessionId: ns.SessionId, Cwd: dir, AdditionalDirectories: tc.dirs})
		q.id = ns.SessionId
		q.turn("read it")
		if got := lastMessage(srv).Content; !strings.Contains(got, tc.want) {
			t.Errorf("loaded with %v, reading the second root: %q, want %q", tc.dirs, got, tc.want)
		}
	}
	q.Stop()
}
