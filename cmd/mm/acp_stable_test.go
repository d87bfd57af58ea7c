package main

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
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

// TestACPCancelRequest: $/cancel_request naming a running prompt stops
// its turn as session/cancel does — the model stream is cut, the prompt
// answers — and mm goes on serving.
func TestACPCancelRequest(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{Content: "A long answer that goes on", StallAfter: ptrTo(2)},
		{Content: "ok"},
	}})
	w := newWorldOn(t, srv)
	r := startWire(t, w.dir, w.env)
	sid := r.Handshake(w.dir)
	r.Send(acptest.Request("p", "session/prompt", map[string]any{"sessionId": sid, "prompt": []map[string]any{{"type": "text", "text": "go"}}}))
	waitSignal(t, "the answer", srv.StepStalled(0))
	r.Send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"p"}}`)
	if a := r.Wait(`"p"`); !strings.Contains(a.Line, `"stopReason":"cancelled"`) {
		t.Errorf("the cancelled prompt answered %s, want cancelled", a.Line)
	}
	if a := r.Prompt("q", sid, "again"); !strings.Contains(a.Line, `"end_turn"`) {
		t.Errorf("the next prompt answered %s", a.Line)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	r.CheckSchema()
}
