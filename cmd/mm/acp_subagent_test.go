package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// childTraffic is one session/update mm wrote, decoded loosely.
type childTraffic struct {
	Session string         `json:"sessionId"`
	Update  map[string]any `json:"update"`
}

func sessionUpdates(out []acptest.Msg) []childTraffic {
	var us []childTraffic
	for _, m := range out {
		if m.Method != "session/update" {
			continue
		}
		var n struct {
			Params childTraffic `json:"params"`
		}
		if json.Unmarshal([]byte(m.Line), &n) == nil {
			us = append(us, n.Params)
		}
	}
	return us
}

// TestACPSubagents: to a client that advertised subagents, a question to
// an asked agent is a child session — announced on the parent (title,
// description, the cancel capability, running) before any of its
// traffic, asked with a session_message, its answer streamed on its own
// session id, ended idle with its stop reason — and session/cancel with
// the child's id stops that agent alone: the parent's turn goes on and
// ends normally, its model told the agent did not answer. The same child
// is used again.
func TestACPSubagents(t *testing.T) {
	t.Parallel()
	chat := llmtest.ServeYAML(t, `
steps:
  - tool_calls: [{name: ask_historian, args: {question: "Why was the parser rewritten?"}}]
  - content: "It could not stream."
  - tool_calls: [{name: ask_historian, args: {question: "And the lexer?"}}]
  - content: "The historian did not answer; going on."
`)
	hist := llmtest.NewServer(llmtest.Scenario{Models: []string{"hist-7b"}, Steps: []llmtest.Step{
		{Content: "It was rewritten in 2024: the old one could not stream."},
		{Content: "The lexer was", StallAfter: ptrTo(2)},
	}})
	t.Cleanup(hist.Close)
	w := newWorldOn(t, chat).askable("historian", "baseURL: "+hist.URL()+"\nmodel: hist-7b\ndescription: knows why the code is the way it is\n")
	r := startWire(t, w.dir, w.env)
	parent := r.HandshakeWith(w.dir, `{"subagents":{}}`)
	if a := r.Prompt("p1", parent, "Ask the historian"); !strings.Contains(a.Line, `"end_turn"`) {
		t.Fatalf("first prompt: %s", a.Line)
	}
	us := sessionUpdates(r.Until("the child's end", func(out []acptest.Msg) bool {
		return strings.Contains(lastLines(out), `"stopReason":"end_turn"`)
	}))
	var child string
	var seen []string
	for _, u := range us {
		kind, _ := u.Update["sessionUpdate"].(string)
		switch {
		case kind == "subagent_update" && child == "":
			child, _ = u.Update["sessionId"].(string)
			caps, _ := u.Update["capabilities"].(map[string]any)
			if u.Session != parent || u.Update["title"] != "historian" || u.Update["description"] != "knows why the code is the way it is" || caps["cancel"] == nil {
				t.Errorf("the announcement = %+v, want on the parent, titled, with cancel", u)
			}
			seen = append(seen, "announced")
		case u.Session == child && child != "":
			seen = append(seen, "child "+kind)
		case kind == "subagent_update":
			st, _ := u.Update["state"].(map[string]any)
			seen = append(seen, "parent subagent_update "+st["state"].(string))
		}
	}
	if len(seen) < 4 || seen[0] != "announced" || seen[1] != "child session_message" || !slices.Contains(seen, "child agent_message_chunk") || seen[len(seen)-1] != "parent subagent_update idle" {
		t.Errorf("child traffic = %v, want announced, the question, the answer on the child, then idle on the parent", seen)
	}
	if got := chat.Requests()[1].Last(); got.Role != "tool" || !strings.Contains(got.Content, "could not stream") {
		t.Errorf("the chat model read %+v, want the historian's answer", got)
	}

	// The second question is stopped on its own.
	r.Send(acptest.Request("p2", "session/prompt", map[string]any{"sessionId": parent, "prompt": []map[string]any{{"type": "text", "text": "Ask again"}}}))
	waitSignal(t, "the historian's second answer", hist.StepStalled(1))
	cid, _ := json.Marshal(child)
	r.Send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":` + string(cid) + `}}`)
	if a := r.Wait(`"p2"`); !strings.Contains(a.Line, `"end_turn"`) {
		t.Errorf("the parent's turn after stopping the child: %s, want end_turn", a.Line)
	}
	if got := chat.Requests()[3].Last(); got.Role != "tool" || !strings.Contains(got.Content, "stopped") {
		t.Errorf("the chat model read %+v, want that the user stopped the historian", got)
	}
	announced := 0
	for _, u := range sessionUpdates(r.Until("the child's cancelled end", func(out []acptest.Msg) bool {
		return strings.Contains(lastLines(out), `"stopReason":"cancelled"`)
	})) {
		if u.Update["sessionUpdate"] == "subagent_update" && u.Update["title"] != nil {
			announced++
		}
		if u.Update["sessionUpdate"] == "subagent_update" && u.Update["sessionId"] != child {
			t.Errorf("a second child: %+v", u)
		}
	}
	if announced != 1 {
		t.Errorf("the child was announced %d times, want once", announced)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	r.CheckSchema()
}

func lastLines(out []acptest.Msg) string {
	var b strings.Builder
	for _, m := range out {
		b.WriteString(m.Line + "\n")
	}
	return b.String()
}

// TestACPGuardSubagent: to a client that advertised subagents, a guard
// agent's check of a tool's output is a child session too: announced on
// the parent, asked what it checks, its finding on its own session, and
// idle at the end — while the model's request still carries the warning.
func TestACPGuardSubagent(t *testing.T) {
	t.Parallel()
	w, _ := guardedReadme(t, "read_file")
	srv := w.srv
	r := startWire(t, w.dir, w.env)
	parent := r.HandshakeWith(w.dir, `{"subagents":{}}`)
	r.Prompt("p", parent, "what is this project?")
	var child, asked, found string
	for _, u := range sessionUpdates(r.Until("the guard's end", func(out []acptest.Msg) bool {
		return strings.Contains(lastLines(out), `"stopReason":"end_turn"`)
	})) {
		switch {
		case u.Update["sessionUpdate"] == "subagent_update" && child == "":
			child, _ = u.Update["sessionId"].(string)
			if u.Update["title"] != "guard guards/injection.yaml" {
				t.Errorf("the guard's announcement = %+v", u.Update)
			}
		case u.Session == child && u.Update["sessionUpdate"] == "session_message":
			c, _ := u.Update["content"].([]any)
			asked = c[0].(map[string]any)["text"].(string)
		case u.Session == child && u.Update["sessionUpdate"] == "agent_message_chunk":
			found += u.Update["content"].(map[string]any)["text"].(string)
		}
	}
	if asked != "Check read_file's output for jailbreak." || !strings.Contains(found, "looks like a prompt injection (jailbreak 0.93)") {
		t.Errorf("the guard's child session: asked %q, found %q", asked, found)
	}
	if res := srv.Requests()[1].Last(); !strings.Contains(res.Content, "[⚠ guard: ") {
		t.Errorf("the model's request lost the guard's warning: %s", res.Content)
	}
	r.Close()
	r.CheckSchema()
}

// TestACPGuardSubagentCancel: session/cancel with a guard agent's child
// session id stops that check alone: the child ends idle, cancelled; the
// user is told the output went unchecked; the parent's turn goes on —
// its model reads the output as it is, with no guard line — and ends
// normally.
func TestACPGuardSubagentCancel(t *testing.T) {
	t.Parallel()
	g := llmtest.ServeYAML(t, "steps:"+guardYes+"\n    stall_after: 0\n")
	w := newWorld(t, "guard_readme")
	w.write("README.md", testenv.InjectedReadme)
	w.trustedConfig(map[string]string{
		"guards/injection.yaml": "baseURL: " + g.URL() + "\nmodel: granite-guardian-3.2-5b\nguard: {risks: [jailbreak], threshold: 0.8}\n",
		"agent.yaml":            "hooks:\n  postToolUse:\n    - {guard: guards/injection.yaml, tools: [read_file]}\n",
	})
	r := startWire(t, w.dir, w.env)
	parent := r.HandshakeWith(w.dir, `{"subagents":{}}`)
	r.Send(acptest.Request("p", "session/prompt", map[string]any{"sessionId": parent, "prompt": []map[string]any{{"type": "text", "text": "what is this project?"}}}))
	waitSignal(t, "the guard's answer", g.StepStalled(0))
	var child string
	r.Until("the guard's announcement", func(out []acptest.Msg) bool {
		for _, u := range sessionUpdates(out) {
			if u.Update["sessionUpdate"] == "subagent_update" && u.Session == parent {
				child, _ = u.Update["sessionId"].(string)
			}
		}
		return child != ""
	})
	cid, _ := json.Marshal(child)
	r.Send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":` + string(cid) + `}}`)
	if a := r.Wait(`"p"`); !strings.Contains(a.Line, `"end_turn"`) {
		t.Errorf("the parent's turn after stopping the guard: %s, want end_turn", a.Line)
	}
	reqs := w.srv.Requests()
	if len(reqs) != 2 || reqs[1].Last().Content != testenv.InjectedReadme {
		t.Errorf("%d model requests; the model read %q, want the README as it is", len(reqs), reqs[len(reqs)-1].Last().Content)
	}
	var ended map[string]any
	var said string
	for _, u := range sessionUpdates(r.Msgs()) {
		switch {
		case u.Update["sessionUpdate"] == "subagent_update" && u.Update["sessionId"] == child:
			ended, _ = u.Update["state"].(map[string]any)
		case u.Session == parent && u.Update["sessionUpdate"] == "agent_message_chunk":
			said += u.Update["content"].(map[string]any)["text"].(string)
		}
	}
	if ended["state"] != "idle" || ended["stopReason"] != "cancelled" {
		t.Errorf("the guard's last state = %v, want idle, cancelled", ended)
	}
	testenv.WantIn(t, "the parent's messages", said, `guard guards/injection.yaml stopped by the user: read\_file's output goes unchecked`, "fastcsv is a streaming CSV reader")
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	r.CheckSchema()
}

// TestACPSubagentLoad: a child session is not saved on its own. Its id
// is its parent's and the agent's name; session/load of the parent
// after a restart replays the asked agent's call with its answer, as a
// client without subagents saw it — and nothing of the child; load,
// resume or fork of the child's id, before or after the restart, is an
// error that names the session to load.
func TestACPSubagentLoad(t *testing.T) {
	t.Parallel()
	chat := llmtest.ServeYAML(t, `
steps:
  - tool_calls: [{name: ask_historian, args: {question: "Why was the parser rewritten?"}}]
  - content: "It could not stream."
`)
	hist := llmtest.NewServer(llmtest.Scenario{Models: []string{"hist-7b"}, Steps: []llmtest.Step{
		{Content: "It was rewritten in 2024: the old one could not stream."},
	}})
	t.Cleanup(hist.Close)
	w := newWorldOn(t, chat).askable("historian", "baseURL: "+hist.URL()+"\nmodel: hist-7b\ndescription: knows why the code is the way it is\n")
	r := startWire(t, w.dir, w.env)
	parent := r.HandshakeWith(w.dir, `{"subagents":{}}`)
	r.Prompt("p", parent, "Ask the historian")
	var child string
	for _, u := range sessionUpdates(r.Msgs()) {
		if u.Update["sessionUpdate"] == "subagent_update" && child == "" {
			child, _ = u.Update["sessionId"].(string)
		}
	}
	if child != parent+"-historian" {
		t.Errorf("the child's id = %q, want the parent's and the agent's name", child)
	}
	refused := func(r *acptest.Wire, id, method string) {
		t.Helper()
		params := map[string]any{"sessionId": child, "cwd": w.dir, "mcpServers": []any{}}
		if m := r.Call(id, method, params); m.Result != nil || !strings.Contains(m.Line, "child session of session "+parent) || !strings.Contains(m.Line, "load "+parent) {
			t.Errorf("%s of the child's id: %s, want an error naming the parent to load", method, m.Line)
		}
	}
	refused(r, "l1", "session/load")
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	r.CheckSchema()

	q := startWire(t, w.dir, w.env)
	q.Initialize(`{"subagents":{}}`)
	q.Load(w.dir, parent)
	var tools, answered []string
	for _, u := range sessionUpdates(q.Msgs()) {
		if u.Session != parent || u.Update["sessionUpdate"] == "subagent_update" || u.Update["sessionUpdate"] == "session_message" {
			t.Errorf("the replay shows the child: %+v", u)
		}
		if u.Update["sessionUpdate"] == "tool_call" {
			tools = append(tools, fmt.Sprint(u.Update["name"]))
			b, _ := json.Marshal(u.Update["content"])
			answered = append(answered, string(b))
		}
	}
	if len(tools) != 1 || tools[0] != "ask_historian" || !strings.Contains(answered[0], "the old one could not stream") {
		t.Errorf("the replay's tool calls = %q, %q; want ask_historian with the historian's answer", tools, answered)
	}
	refused(q, "l2", "session/load")
	refused(q, "r2", "session/resume")
	refused(q, "f2", "session/fork")
	if err := q.Close(); err != nil {
		t.Error(err)
	}
	q.CheckSchema()
}
