package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// commandsAfterAnswer checks on the raw stream that the / menu of the
// session (available_commands_update) arrives after the line answering
// the request that opened it (session/new, load or resume).
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

// TestACPSessionSurvivesRestart: a stored session survives an agent
// restart. A session with an edit; mm restarts; session/list shows it;
// session/load replays the user text, the answer and the tool call with
// its diff before answering; the next prompt's request carries the earlier
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
	joined := transcript(last)
	testenv.WantIn(t, "the request after the restart", joined, "Change hello to goodbye in hello.txt", "assistant: Done: hello.txt now says goodbye world.", "What did I ask you before?")
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

// TestACPThoughtLevel: the reasoning effort picker, a config option of
// category thought_level: absent while the model has not reasoned,
// offered (config_option_update) once it has; "none" sends
// chat_template_kwargs.enable_thinking=false to llama.cpp; an unknown
// level lists the valid ones.
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

// TestACPSessionDelete: session/delete removes a saved session that is
// open, and one that is only saved; neither is listed nor loadable after,
// and an unknown id is refused with its name.
func TestACPSessionDelete(t *testing.T) {
	t.Parallel()
	w := newWorldOn(t, llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "one"}, {Content: "two"}}}), "XDG_STATE_HOME="+t.TempDir())
	dir, ctx := w.dir, w.ctx
	p := w.start(acptest.Options{})
	if init := p.Initialize(ctx); init.AgentCapabilities.SessionCapabilities.Delete == nil {
		t.Errorf("sessionCapabilities.delete not advertised: %+v", init.AgentCapabilities.SessionCapabilities)
	}
	var ids []sdk.SessionId
	for _, text := range []string{"first", "second"} {
		ids = append(ids, p.open())
		p.turn(text)
	}
	// The second is closed: deleting it reaches the store alone.
	if _, err := p.Conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: ids[1]}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := p.Conn.UnstableDeleteSession(ctx, sdk.UnstableDeleteSessionRequest{SessionId: id}); err != nil {
			t.Fatalf("delete %s: %v", id, err)
		}
	}
	list, err := p.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
	if err != nil || len(list.Sessions) != 0 {
		t.Errorf("list after delete = %+v, %v; want none", list.Sessions, err)
	}
	for _, id := range ids {
		_, err := p.Conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []sdk.McpServer{}})
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 {
			t.Errorf("load of deleted %s: %v, want -32602", id, err)
		}
	}
	if _, err := p.Prompt(ctx, ids[0], "again"); err == nil {
		t.Errorf("a prompt to the deleted open session was answered")
	}
	_, err = p.Conn.UnstableDeleteSession(ctx, sdk.UnstableDeleteSessionRequest{SessionId: "sess_nothere"})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32602 {
		t.Errorf("delete of an unknown session: %v, want -32602", err)
	}
	p.Stop()
}

// TestACPMessageIDsAndToolNames: the chunks of one model call share a
// messageId and the next call's answer has another; a tool call carries
// the tool's name; session/load, in another mm, replays the user's
// message with an id and the answers and the call with the ids and the
// name they were shown with.
func TestACPMessageIDsAndToolNames(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{Reasoning: "Read it first.", Content: "Reading the file.", ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": "a.txt"}}}},
		{Content: "It says hi."},
	}})
	w := newWorldOn(t, srv, "XDG_STATE_HOME="+t.TempDir())
	w.write("a.txt", "hi\n")
	p := w.start(acptest.Options{})
	id := p.open()
	p.turn("What does a.txt say?")
	live := chunkIDs(p.Updates())
	if len(live.agent) != 2 || live.agent[0] == live.agent[1] {
		t.Errorf("answer message ids = %v, want two different ones (one per model call)", live.agent)
	}
	if len(live.thought) != 1 || len(live.agent) > 0 && live.thought[0] != live.agent[0] {
		t.Errorf("thought ids = %v, answer ids = %v: the reasoning and the text of one call share one", live.thought, live.agent)
	}
	if live.missing > 0 {
		t.Errorf("%d text chunks without a messageId", live.missing)
	}
	if !strings.Contains(p.Received.String(), `"name":"read_file"`) {
		t.Errorf("no tool_call carries the tool's name:\n%s", p.Received)
	}
	p.Stop()

	q := w.loadInNew(id)
	replayed := chunkIDs(q.Updates())
	if !slices.Equal(replayed.agent, live.agent) {
		t.Errorf("replayed answer ids = %v, shown live as %v", replayed.agent, live.agent)
	}
	if len(replayed.user) != 1 || replayed.missing > 0 {
		t.Errorf("replayed user message ids = %v (%d chunks without), want one", replayed.user, replayed.missing)
	}
	if !strings.Contains(q.Received.String(), `"name":"read_file"`) {
		t.Errorf("the replayed tool_call lost the tool's name:\n%s", q.Received)
	}
	q.Stop()
}

// loadInNew starts another mm (the binary) in the world and loads the
// session id there: its replay is then in the editor's updates.
func (w *world) loadInNew(id sdk.SessionId) *editor {
	w.t.Helper()
	q := w.start(acptest.Options{})
	q.Load(w.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.dir})
	q.id = id
	return q
}

// messageIDs are the distinct messageIds of a client's chunks, in order.
type messageIDs struct {
	user, agent, thought []string
	missing              int // text chunks (user or answer) without one
}

func chunkIDs(us []sdk.SessionUpdate) messageIDs {
	var m messageIDs
	add := func(to *[]string, id *string) {
		if id == nil {
			m.missing++
			return
		}
		if n := len(*to); n == 0 || (*to)[n-1] != *id {
			*to = append(*to, *id)
		}
	}
	for _, u := range us {
		switch {
		case u.UserMessageChunk != nil:
			add(&m.user, u.UserMessageChunk.MessageId)
		case u.AgentMessageChunk != nil:
			add(&m.agent, u.AgentMessageChunk.MessageId)
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.MessageId != nil:
			add(&m.thought, u.AgentThoughtChunk.MessageId)
		}
	}
	return m
}

// TestACPThinkingSwitch: a model whose chat template (as llama-server
// shows it) reads enable_thinking gets thinking as a boolean option —
// only for a client that advertised boolean config options — and
// switching it off sends enable_thinking false with the next request.
func TestACPThinkingSwitch(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{
		ChatTemplate: "{%- if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>{%- endif %}",
		Steps:        []llmtest.Step{{Reasoning: "A greeting.", Content: "Hello!"}, {Content: "Hello, without thinking."}},
	})
	w := newWorldOn(t, srv)
	r := startWire(t, w.dir, w.env)
	session := r.HandshakeWith(w.dir, `{"session":{"configOptions":{"boolean":{}}}}`)
	waitLogged(t, w.ctx, w.env, "thinking switch")
	sid, _ := json.Marshal(session)
	r.Prompt("p1", session, "hi")
	toggle := func(line string) (value, found bool) {
		var m struct {
			Params struct {
				Update struct {
					ConfigOptions []map[string]any `json:"configOptions"`
				} `json:"update"`
			} `json:"params"`
			Result struct {
				ConfigOptions []map[string]any `json:"configOptions"`
			} `json:"result"`
		}
		json.Unmarshal([]byte(line), &m)
		for _, o := range append(m.Params.Update.ConfigOptions, m.Result.ConfigOptions...) {
			if o["id"] == "thought_level" {
				v, ok := o["currentValue"].(bool)
				return v, ok && o["type"] == "boolean" && o["category"] == "thought_level"
			}
		}
		return false, false
	}
	shown := false
	for _, l := range strings.Split(r.Lines(), "\n") {
		if v, ok := toggle(l); ok && strings.Contains(l, "config_option_update") {
			shown = v
		}
	}
	if !shown {
		t.Fatalf("no config_option_update shows thinking as a boolean, on, after the model reasoned:\n%s", r.Lines())
	}
	r.Send(`{"jsonrpc":"2.0","id":"off","method":"session/set_config_option","params":{"sessionId":` + string(sid) + `,"configId":"thought_level","type":"boolean","value":false}}`)
	if v, ok := toggle(r.Wait(`"off"`).Line); !ok || v {
		t.Errorf("set_config_option answered thinking = %v (boolean %v), want false", v, ok)
	}
	r.Prompt("p2", session, "hi again")
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, `"enable_thinking":false`) {
		t.Errorf("the request after switching thinking off:\n%s\nwant chat_template_kwargs.enable_thinking false", body)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	r.CheckSchema()

	// A client without boolean options gets the same switch as a select.
	env2 := mmEnv(t, srv)
	q := startWire(t, w.dir, env2)
	qid := q.Handshake(w.dir)
	waitLogged(t, w.ctx, env2, "thinking switch")
	if a := q.Call("p", "session/set_config_option", map[string]any{"sessionId": qid, "configId": "thought_level", "value": "on"}); !strings.Contains(a.Line, `"type":"select"`) || !strings.Contains(a.Line, `"value":"on"`) || strings.Contains(a.Line, `"boolean"`) {
		t.Errorf("without boolean options, thinking should be a select of none and on: %s", a.Line)
	}
	q.Close()
	q.CheckSchema()
}

// TestACPFork: session/fork (unstable, advertised) copies a session at
// its current end under a new id: the fork's answer and its next request
// carry the original's mode and chosen model, and its request the
// original's conversation; the original goes on without the fork's turn
// and the fork without the original's later one; session/list shows
// both, and a restarted agent loads the fork with its own turns only.
// Every message validates against the 2026-11 schema.
func TestACPFork(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{Models: []string{"fake-model", "big-model"}, Steps: []llmtest.Step{
		{Content: "Looking at the parser."}, {Content: "The lexer, in the fork."}, {Content: "Still the parser."}}})
	w := newWorldOn(t, srv, "XDG_STATE_HOME="+t.TempDir())
	dir, ctx := w.dir, w.ctx
	p := w.serve(acptest.Options{})
	if init := p.Initialize(ctx); init.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Fatalf("session/fork not advertised: %+v", init.AgentCapabilities.SessionCapabilities)
	}
	a := p.open()
	if _, err := p.Conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: a, ModeId: "accept-edits"}); err != nil {
		t.Fatal(err)
	}
	// The model list comes after session/new's answer; then the
	// original's model is chosen, not the server's default.
	p.WaitUpdates("the model picker", func(us []sdk.SessionUpdate) bool {
		return slices.ContainsFunc(us, func(u sdk.SessionUpdate) bool {
			return u.ConfigOptionUpdate != nil && selectOf(u.ConfigOptionUpdate.ConfigOptions, "model") != nil
		})
	})
	if _, err := p.Conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: a, ConfigId: "model", Value: "big-model"}}); err != nil {
		t.Fatal(err)
	}
	p.turn("Fix the parser")
	f, err := p.Conn.UnstableForkSession(ctx, sdk.UnstableForkSessionRequest{SessionId: a, Cwd: dir})
	if err != nil || f.SessionId == "" || f.SessionId == a {
		t.Fatalf("fork: %+v %v", f, err)
	}
	if f.Modes == nil || f.Modes.CurrentModeId != "accept-edits" {
		t.Errorf("the fork's mode = %+v", f.Modes)
	}
	var opts []sdk.SessionConfigOption
	raw, _ := json.Marshal(f.ConfigOptions)
	json.Unmarshal(raw, &opts)
	if m := selectOf(opts, "model"); m == nil || m.CurrentValue != "big-model" {
		t.Errorf("the fork's model option = %+v, want the original's big-model", m)
	}
	if _, err := p.Prompt(ctx, f.SessionId, "and the lexer?"); err != nil {
		t.Fatal(err)
	}
	p.turn("and the tests?")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if fork := transcript(reqs[1]); !strings.Contains(fork, "Fix the parser") || !strings.Contains(fork, "Looking at the parser.") || reqs[1].Model != "big-model" {
		t.Errorf("the fork's request (model %q) lacks the original conversation or model:\n%s", reqs[1].Model, fork)
	}
	if orig := transcript(reqs[2]); !strings.Contains(orig, "Looking at the parser.") || strings.Contains(orig, "and the lexer?") || strings.Contains(orig, "in the fork") {
		t.Errorf("the original's next request is not the original's alone:\n%s", orig)
	}
	l, err := p.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, s := range l.Sessions {
		titles = append(titles, *s.Title)
	}
	slices.Sort(titles)
	if strings.Join(titles, "|") != "Fix the parser|Fix the parser (fork)" {
		t.Errorf("session/list titles %q", titles)
	}
	p.Stop()

	// A restarted agent loads the fork: its own turns, not the original's
	// later one, and the original's model still chosen.
	q := w.serve(acptest.Options{})
	ld := q.Load(ctx, sdk.LoadSessionRequest{SessionId: f.SessionId, Cwd: dir})
	if got := acptest.UserText(q.Updates()); !strings.Contains(got, "Fix the parser") || !strings.Contains(got, "and the lexer?") || strings.Contains(got, "and the tests?") {
		t.Errorf("the fork loaded with the user's messages %q", got)
	}
	if m := selectOf(ld.ConfigOptions, "model"); m == nil || m.CurrentValue != "big-model" {
		t.Errorf("the loaded fork's model option = %+v, want big-model", m)
	}
}

// infos are the session_info_update updates received, in order.
func infos(us []sdk.SessionUpdate) []sdk.SessionSessionInfoUpdate {
	var out []sdk.SessionSessionInfoUpdate
	for _, u := range us {
		if u.SessionInfoUpdate != nil {
			out = append(out, *u.SessionInfoUpdate)
		}
	}
	return out
}

// TestACPTitles: the title comes from the first prompt's first line, in
// a session_info_update sent before the answer; each turn ends with one
// carrying updatedAt; session/list answers the same title; /title NEW
// renames without a model request, and the name survives later turns and
// a restart (session/load sends it after the replay). Titles are stable
// ACP: a client sees them whatever it advertises. Every message mm wrote
// validates against the 2026-11 schema.
func TestACPTitles(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "titles", "XDG_STATE_HOME="+t.TempDir())
	ctx := w.ctx
	p := w.session()
	id := p.id
	if names := commandsAfterAnswer(t, p, string(id)); !slices.Contains(names, "title") {
		t.Errorf("the / menu lacks title: %v", names)
	}
	before := time.Now().UTC().Add(-time.Second)
	p.turn("Fix the parser\nIt drops the last token.")
	us := p.Updates()
	first, answer := -1, -1
	for i, u := range us {
		if u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil && first < 0 {
			first = i
		}
		if u.AgentMessageChunk != nil && answer < 0 {
			answer = i
		}
	}
	is := infos(us)
	if first < 0 || *us[first].SessionInfoUpdate.Title != "Fix the parser" || answer >= 0 && first > answer {
		t.Fatalf("no title before the answer: %+v", is)
	}
	last := is[len(is)-1]
	if last.UpdatedAt == nil {
		t.Fatalf("the turn did not end with updatedAt: %+v", is)
	}
	if at, err := time.Parse(time.RFC3339, *last.UpdatedAt); err != nil || at.Before(before) {
		t.Errorf("updatedAt %q (%v)", *last.UpdatedAt, err)
	}
	listed := func() string {
		l, err := p.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(w.dir)})
		if err != nil || len(l.Sessions) != 1 || l.Sessions[0].Title == nil {
			t.Fatalf("session/list: %+v, %v", l, err)
		}
		return *l.Sessions[0].Title
	}
	if got := listed(); got != "Fix the parser" {
		t.Errorf("session/list title %q", got)
	}

	p.endTurn("/title Parser rewrite")
	if n := len(w.srv.Requests()); n != 1 {
		t.Errorf("/title asked the model (%d requests)", n)
	}
	p.WaitUpdates("the new title", titled("Parser rewrite"))
	if got := listed(); got != "Parser rewrite" {
		t.Errorf("session/list after /title: %q", got)
	}
	if _, err := p.prompt("/title"); err == nil {
		t.Error("/title with no title was accepted")
	}
	p.turn("and the lexer?")
	if got := listed(); got != "Parser rewrite" {
		t.Errorf("a later turn changed the title: %q", got)
	}
	if n := acptest.CheckSchema(t, p.Sent.String(), p.Received.String()); n == 0 {
		t.Error("no message checked")
	}
	p.Stop()

	q := w.serve(acptest.Options{})
	q.Load(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.dir})
	q.WaitUpdates("the title after the replay", titled("Parser rewrite"))
}

// titled reports whether the last session_info_update names title.
func titled(title string) func([]sdk.SessionUpdate) bool {
	return func(us []sdk.SessionUpdate) bool {
		is := infos(us)
		return len(is) > 0 && is[len(is)-1].Title != nil && *is[len(is)-1].Title == title
	}
}

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
	testenv.WriteFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "maxTurns: 8\n")
	testenv.WriteFile(t, filepath.Join(second, "lib.txt"), "the second root's file\n")
	testenv.WriteFile(t, filepath.Join(second, ".mm", "agent.yaml"), "hooks:\n  preGeneration:\n    - {command: [sh, -c, \"touch "+filepath.Join(second, "hooked")+"\"]}\n")
	os.MkdirAll(filepath.Join(second, ".git", "hooks"), 0o755)
	testenv.WriteFile(t, filepath.Join(outside, "secret.txt"), "not yours\n")
	if err := os.Symlink(filepath.Join(second, ".git", "hooks", "pre-commit"), filepath.Join(dir, "link.txt")); err != nil {
		t.Skip("no symlinks:", err)
	}
	// Neovim started in the second root runs its .nvimrc: a file of the
	// first root it links to runs later too.
	testenv.WriteFile(t, filepath.Join(dir, "notes2.txt"), "plain\n")
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

// TestACPResumeWithRoots is session/resume with a root list: a session
// begun in one root, resumed after a restart with a second, replays
// nothing; its model is told of the new root and reads the second
// root's file, while a relative path stays relative to cwd, both in a
// read and in a write; session/list then names the root. Resumed again
// without it in the same mm, the open session is reopened: the model is
// told the root is gone, and reading it is refused.
func TestACPResumeWithRoots(t *testing.T) {
	t.Parallel()
	dir, second := t.TempDir(), t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "notes.txt"), "cwd's notes\n")
	testenv.WriteFile(t, filepath.Join(second, "notes.txt"), "the second root's notes\n")
	testenv.WriteFile(t, filepath.Join(second, "lib.txt"), "the second root's file\n")
	read := func(path string) llmtest.ToolCall {
		return llmtest.ToolCall{Name: "read_file", Args: map[string]any{"path": path}}
	}
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{Content: "Hello."},
		{ToolCalls: []llmtest.ToolCall{
			read(filepath.Join(second, "lib.txt")),
			read("notes.txt"),
			{Name: "write_file", Args: map[string]any{"path": "rel.txt", "content": "relative\n"}},
		}},
		{Content: "Read."},
		{ToolCalls: []llmtest.ToolCall{read(filepath.Join(second, "lib.txt"))}},
		{Content: "Refused."},
	}})
	t.Cleanup(srv.Close)
	env := mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir())
	ctx := testenv.Context(t)
	p := startMM(t, dir, env, acptest.Options{})
	p.id = p.NewSession(ctx, dir)
	p.endTurn("hi")
	p.Stop()

	q := startMM(t, dir, env, acptest.Options{})
	q.Initialize(ctx)
	resume := func(dirs []string) {
		t.Helper()
		if _, err := q.Conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: p.id, Cwd: dir, AdditionalDirectories: dirs, McpServers: []sdk.McpServer{}}); err != nil {
			t.Fatalf("session/resume with %v: %v", dirs, err)
		}
		q.id = p.id
	}
	resume([]string{second})
	if us := q.Updates(); acptest.UserText(us)+q.answer() != "" {
		t.Errorf("session/resume replayed:\n%s", strings.Join(acptest.Describe(us), "\n"))
	}
	q.endTurn("read them")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if got := transcript(reqs[1]); !strings.Contains(got, "user: Workspace: "+dir+"\n") || !strings.Contains(got, "assistant: Hello.") {
		t.Errorf("the resumed session's request lost its history:\n%s", got)
	}
	testenv.WantIn(t, "the first prompt after resuming", reqs[1].Last().Content, "Also in the workspace now: "+second+" (", "relative paths stay relative to "+dir)
	results := reqs[2].Messages[len(reqs[2].Messages)-3:]
	if !strings.Contains(results[0].Content, "the second root's file") || !strings.Contains(results[1].Content, "cwd's notes") {
		t.Errorf("after resuming with the second root, the model read:\n%s\n%s", results[0].Content, results[1].Content)
	}
	if readFile(t, filepath.Join(dir, "rel.txt")) != "relative\n" || exists(filepath.Join(second, "rel.txt")) {
		t.Error("a relative write did not land in cwd alone")
	}
	list, err := q.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
	if err != nil || len(list.Sessions) != 1 || !slices.Equal(list.Sessions[0].AdditionalDirectories, []string{second}) {
		t.Errorf("session/list = %+v, %v; want the session with its second root", list.Sessions, err)
	}

	resume(nil)
	q.endTurn("read it again")
	testenv.WantIn(t, "the first prompt after resuming without the root", lastMessage(srv).Content, "outside the workspace")
	if got := srv.Requests()[3].Last().Content; !strings.Contains(got, "No longer in the workspace: "+second) {
		t.Errorf("the model was not told the second root is gone:\n%s", got)
	}
}
