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
)

// commandsAfterAnswer checks A5 on the raw stream: the / menu of the
// session arrives after the line answering the request that opened it.
func commandsAfterAnswer(t *testing.T, p *editor, answerHas string) []string {
	t.Helper()
	p.WaitUpdates("available_commands_update", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool { return u.AvailableCommandsUpdate != nil })
	})
	answer, menu := -1, -1
	for i, l := range strings.Split(p.Received.String(), "\n") {
		if answer < 0 && strings.Contains(l, `"result"`) && strings.Contains(l, answerHas) {
			answer = i
		}
		if menu < 0 && strings.Contains(l, "available_commands_update") {
			menu = i
		}
	}
	if answer < 0 || menu < answer {
		t.Errorf("available_commands_update on line %d, the answer on line %d: the menu must follow the answer", menu, answer)
	}
	var names []string
	for _, u := range p.Updates() {
		if u.AvailableCommandsUpdate != nil {
			for _, c := range u.AvailableCommandsUpdate.AvailableCommands {
				names = append(names, c.Name)
			}
		}
	}
	return names
}

func selectOf(opts []sdk.SessionConfigOption, id string) *sdk.SessionConfigOptionSelect {
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id {
			return o.Select
		}
	}
	return nil
}

func values(s *sdk.SessionConfigOptionSelect) []string {
	var out []string
	if s != nil && s.Options.Ungrouped != nil {
		for _, o := range *s.Options.Ungrouped {
			out = append(out, string(o.Value))
		}
	}
	return out
}

// TestACPSessionSurvivesRestart is the acceptance path of E29/A2: a
// session with an edit; mm restarts; session/list shows it; session/load
// replays the user text, the answer and the tool call with its diff
// before answering; the next prompt's request carries the earlier
// history. The file is private and holds no API key.
func TestACPSessionSurvivesRestart(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	const key = "sk-test-secret-4242"
	w := newWorld(t, "session_restart", "XDG_STATE_HOME="+state, "MM_API_KEY="+key)
	dir, ctx := w.dir, w.ctx
	file := w.write("hello.txt", "hello world\nsecond line\n")

	p := w.serve(acptest.Options{})
	c := p.Initialize(ctx).AgentCapabilities
	if !c.LoadSession || c.SessionCapabilities.List == nil || c.SessionCapabilities.Resume == nil || c.SessionCapabilities.Close == nil {
		t.Errorf("capabilities = %+v, want loadSession, list, resume, close", c)
	}
	ns := p.Open(ctx, sdk.NewSessionRequest{Cwd: dir})
	id := ns.SessionId
	p.id = id
	if ns.Modes == nil || ns.Modes.CurrentModeId != "ask" || len(ns.Modes.AvailableModes) != 4 {
		t.Errorf("modes = %+v", ns.Modes)
	}
	if got := values(selectOf(ns.ConfigOptions, "mode")); !slices.Equal(got, []string{"ask", "accept-edits", "plan", "yolo"}) {
		t.Errorf("mode option values = %v", got)
	}
	// The first answer does not wait for the server's model list: the
	// picker follows it (and the next session has it at once:
	// TestACPModesAndModel).
	if m := selectOf(ns.ConfigOptions, "model"); m != nil {
		t.Errorf("session/new waited for GET /v1/models: model option %+v in the answer", m)
	}
	p.WaitUpdates("config_option_update with the model picker", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool {
			if u.ConfigOptionUpdate == nil {
				return false
			}
			m := selectOf(u.ConfigOptionUpdate.ConfigOptions, "model")
			return m != nil && m.CurrentValue == "fake-model" && *m.Category == sdk.SessionConfigOptionCategoryModel
		})
	})
	if names := commandsAfterAnswer(t, p, string(id)); !slices.Contains(names, "compact") || !slices.Contains(names, "skills") {
		t.Errorf("commands = %v, want compact and skills", names)
	}
	resp := p.endTurn("Change hello to goodbye in hello.txt")
	if resp.Usage == nil || resp.Usage.InputTokens == 0 || resp.Usage.TotalTokens != resp.Usage.InputTokens+resp.Usage.OutputTokens {
		t.Errorf("prompt usage = %+v", resp.Usage)
	}
	p.Stop()

	// The file: one per session, private, without the key.
	files, _ := filepath.Glob(filepath.Join(state, "mm", "sessions", "*", "*.json"))
	if len(files) != 1 {
		t.Fatalf("session files = %v", files)
	}
	fi, _ := os.Stat(files[0])
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("session file mode %v", fi.Mode().Perm())
	}
	if strings.Contains(readFile(t, files[0]), key) {
		t.Errorf("the API key is in the session file")
	}

	// A new mm: list, load.
	p2 := w.serve(acptest.Options{})
	p2.Initialize(ctx)
	list, err := p2.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != id || list.Sessions[0].Title == nil || *list.Sessions[0].Title != "Change hello to goodbye in hello.txt" || list.Sessions[0].UpdatedAt == nil {
		t.Errorf("list = %+v", list.Sessions)
	}
	if other, _ := p2.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(t.TempDir())}); len(other.Sessions) != 0 {
		t.Errorf("another workspace lists %+v", other.Sessions)
	}
	ld := p2.Load(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: dir})
	p2.id = id
	if ld.Modes == nil || ld.Modes.CurrentModeId != "ask" || selectOf(ld.ConfigOptions, "mode") == nil {
		t.Errorf("load answer = %+v", ld)
	}
	// The SDK client delivers the updates sent before the answer before
	// returning it.
	replayed := p2.Updates()
	var user, answer string
	var diff *sdk.ToolCallContentDiff
	for _, u := range replayed {
		switch {
		case u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil:
			user += u.UserMessageChunk.Content.Text.Text
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			answer += u.AgentMessageChunk.Content.Text.Text
		case u.ToolCall != nil && u.ToolCall.Kind == sdk.ToolKindEdit:
			if u.ToolCall.Status != sdk.ToolCallStatusCompleted {
				t.Errorf("replayed edit status = %s", u.ToolCall.Status)
			}
			for _, c := range u.ToolCall.Content {
				if c.Diff != nil {
					diff = c.Diff
				}
			}
		}
	}
	if user != "Change hello to goodbye in hello.txt" || !strings.Contains(answer, "Done: hello.txt now says goodbye world.") {
		t.Errorf("replay: user %q, answer %q\n%s", user, answer, strings.Join(acptest.Describe(replayed), "\n"))
	}
	if diff == nil || diff.Path != file || diff.OldText == nil || *diff.OldText != "hello world\nsecond line\n" || diff.NewText != "goodbye world\nsecond line\n" {
		t.Errorf("replayed diff = %+v", diff)
	}
	commandsAfterAnswer(t, p2, `"configOptions"`)

	p2.turn("What did I ask you before?")
	reqs := w.srv.Requests()
	last := reqs[len(reqs)-1]
	var said []string
	for _, m := range last.Messages {
		said = append(said, m.Role+": "+m.Content)
	}
	joined := strings.Join(said, "\n")
	for _, want := range []string{"Change hello to goodbye in hello.txt", "assistant: Done: hello.txt now says goodbye world.", "What did I ask you before?"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the request after the restart lacks %q:\n%s", want, joined)
		}
	}
	if last.Messages[len(last.Messages)-1].Content != "What did I ask you before?" {
		t.Errorf("last message = %q", last.Messages[len(last.Messages)-1].Content)
	}

	// Bad input: an unknown id is named in the error.
	_, err = p2.Conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: "sess_nope", Cwd: dir, McpServers: []sdk.McpServer{}})
	if err == nil || !strings.Contains(err.Error(), "sess_nope") {
		t.Errorf("load of an unknown id: %v", err)
	}
}

// TestACPModesAndModel: in plan mode a write is refused without a prompt
// and the file is absent; the model picker switches the next request's
// model; in accept-edits a write applies without a prompt but a command
// that is not proven read-only asks;
// unknown values are refused with the valid ones, nothing changed.
func TestACPModesAndModel(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "modes", "XDG_STATE_HOME="+t.TempDir())
	ctx := w.ctx
	p := w.session()
	// The model list is asked after session/new's answer; once it came,
	// the next session's answer has the picker.
	p.WaitUpdates("the model picker", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool {
			return u.ConfigOptionUpdate != nil && selectOf(u.ConfigOptionUpdate.ConfigOptions, "model") != nil
		})
	})
	ns := p.Open(ctx, sdk.NewSessionRequest{Cwd: w.dir})
	if m := selectOf(ns.ConfigOptions, "model"); m == nil || m.CurrentValue != "fake-model" || !slices.Equal(values(m), []string{"fake-model", "big-model"}) {
		t.Errorf("the second session/new: model option %+v, want the list seen", m)
	}
	id := ns.SessionId
	p.id = id

	set := func(cfg, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return p.Conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: id, ConfigId: sdk.SessionConfigId(cfg), Value: sdk.SessionConfigValueId(value)}})
	}
	// Bad values first: refused, listing the valid ones.
	if _, err := set("mode", "careful"); err == nil || !strings.Contains(err.Error(), "ask, accept-edits, plan, yolo") {
		t.Errorf("unknown mode: %v", err)
	}
	if _, err := p.Conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "careful"}); err == nil || !strings.Contains(err.Error(), "-32602") {
		t.Errorf("unknown mode through set_mode: %v", err)
	}
	if _, err := set("model", "nope-model"); err == nil || !strings.Contains(err.Error(), "fake-model, big-model") {
		t.Errorf("unknown model: %v", err)
	}

	r, err := set("mode", "plan")
	if err != nil {
		t.Fatal(err)
	}
	if m := selectOf(r.ConfigOptions, "mode"); m == nil || m.CurrentValue != "plan" || selectOf(r.ConfigOptions, "model") == nil {
		t.Errorf("answer to set mode = %+v", r.ConfigOptions)
	}
	p.WaitUpdates("current_mode_update", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool {
			return u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "plan"
		})
	})
	p.turn("Plan the change")
	if perms := p.Permissions(); len(perms) != 0 {
		t.Errorf("plan mode asked %d times", len(perms))
	}
	if _, err := os.Stat(filepath.Join(w.dir, "plan.txt")); !os.IsNotExist(err) {
		t.Errorf("plan mode wrote plan.txt (%v)", err)
	}
	reqs := w.srv.Requests()
	if first := reqs[0].Messages[len(reqs[0].Messages)-1].Content; !strings.Contains(first, "plan mode") {
		t.Errorf("the model was not told it is planning: %q", first)
	}
	if res := reqs[1].Last(); res.Role != "tool" || !strings.Contains(res.Content, "plan mode is read-only") {
		t.Errorf("write result in plan mode = %+v", res)
	}

	// Switch the model and the mode (through set_mode this time).
	if r, err := set("model", "big-model"); err != nil || selectOf(r.ConfigOptions, "model").CurrentValue != "big-model" {
		t.Fatalf("set model: %+v, %v", r, err)
	}
	if _, err := p.Conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "accept-edits"}); err != nil {
		t.Fatal(err)
	}
	p.WaitUpdates("config_option_update with accept-edits", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool {
			return u.ConfigOptionUpdate != nil && selectOf(u.ConfigOptionUpdate.ConfigOptions, "mode").CurrentValue == "accept-edits"
		})
	})
	p.turn("Do it")
	if got := w.read("new.txt"); got != "written\n" {
		t.Errorf("new.txt = %q", got)
	}
	perms := p.Permissions()
	if len(perms) != 1 || perms[0].ToolCall.Kind == nil || *perms[0].ToolCall.Kind != sdk.ToolKindExecute {
		t.Errorf("accept-edits: permission requests %+v, want one, for bash", perms)
	}
	reqs = w.srv.Requests()
	if reqs[1].Model != "fake-model" || reqs[2].Model != "big-model" || reqs[4].Model != "big-model" {
		t.Errorf("models sent: %q %q %q", reqs[1].Model, reqs[2].Model, reqs[4].Model)
	}
	if note := reqs[2].Messages[len(reqs[2].Messages)-1].Content; !strings.Contains(note, "plan mode is over") {
		t.Errorf("leaving plan mode not told: %q", note)
	}
	// The prefix of the conversation survived both mode changes: the
	// second turn's first request starts with everything the first turn
	// sent and received.
	prev, next := reqs[1].Messages, reqs[2].Messages
	for i := range prev {
		if prev[i].Content != next[i].Content || prev[i].Role != next[i].Role {
			t.Errorf("message %d changed across the mode switch", i)
		}
	}
}

// TestACPThoughtLevel is A9's thought level picker: absent while the
// model has not reasoned, offered (config_option_update) once it has;
// "none" sends chat_template_kwargs.enable_thinking=false to llama.cpp;
// an unknown level lists the valid ones.
func TestACPThoughtLevel(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "thinking", "XDG_STATE_HOME="+t.TempDir())
	ctx := w.ctx
	p := w.serve(acptest.Options{})
	ns := p.Open(ctx, sdk.NewSessionRequest{Cwd: w.dir})
	p.id = ns.SessionId
	if selectOf(ns.ConfigOptions, "thought_level") != nil {
		t.Errorf("thought level offered before the model reasoned")
	}
	p.turn("hi")
	var levels []string
	p.WaitUpdates("config_option_update with thought_level", func(us []sdk.SessionUpdate) bool {
		for _, u := range us {
			if u.ConfigOptionUpdate != nil {
				if s := selectOf(u.ConfigOptionUpdate.ConfigOptions, "thought_level"); s != nil {
					levels = values(s)
					return true
				}
			}
		}
		return false
	})
	if !slices.Equal(levels, []string{"none", "low", "medium", "high"}) {
		t.Errorf("levels = %v", levels)
	}
	set := func(v string) error {
		_, err := p.Conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: ns.SessionId, ConfigId: "thought_level", Value: sdk.SessionConfigValueId(v)}})
		return err
	}
	if err := set("extreme"); err == nil || !strings.Contains(err.Error(), "none, low, medium, high") {
		t.Errorf("unknown level: %v", err)
	}
	if err := set("none"); err != nil {
		t.Fatal(err)
	}
	p.turn("hi again")
	reqs := w.srv.Requests()
	var kw map[string]any
	if reqs[0].Field("chat_template_kwargs", &kw) {
		t.Errorf("first request already turns thinking off: %v", kw)
	}
	if !reqs[1].Field("chat_template_kwargs", &kw) || kw["enable_thinking"] != false {
		t.Errorf("after none: chat_template_kwargs = %v", kw)
	}
}

// TestACPNewSessionWritesNothing: session/new answers without writing
// anything (the workspace and the state directory are as they were); the
// never-prompted session is written when mm stops, so that a new mm still
// loads it (acpx resumes the session it created).
func TestACPNewSessionWritesNothing(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	w := newWorldOn(t, llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "hi"}}}), "XDG_STATE_HOME="+state)
	dir, ctx := w.dir, w.ctx
	files := func() []string {
		var fs []string
		for _, root := range []string{dir, state} {
			filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					fs = append(fs, path)
				}
				return nil
			})
		}
		return fs
	}

	p := w.serve(acptest.Options{})
	id := p.NewSession(ctx, dir)
	if fs := files(); len(fs) != 0 {
		t.Errorf("session/new wrote %v", fs)
	}
	p.Stop()
	if fs, _ := filepath.Glob(filepath.Join(state, "mm", "sessions", "*", string(id)+".json")); len(fs) != 1 {
		t.Fatalf("after mm stopped, session files = %v (all files: %v)", fs, files())
	}

	p2 := w.serve(acptest.Options{})
	p2.Initialize(ctx)
	if _, err := p2.Conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Errorf("a new mm cannot load the never-prompted session: %v", err)
	}
}
