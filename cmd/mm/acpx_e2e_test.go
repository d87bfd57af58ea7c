package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/internal/testenv"
)

// acpxWorld is the acpx client's path, and a world on the named scenario
// (extra in mm's environment) whose workspace has hello.txt, its path.
func acpxWorld(t *testing.T, name string, extra ...string) (acpx string, w *world, file string) {
	t.Helper()
	acpx = testenv.NeedTool(t, "acpx")
	w = newWorld(t, name, extra...)
	return acpx, w, w.write("hello.txt", "hello world\nsecond line\n")
}

// TestACPXReadEditAnswer runs the real acpx CLI (a client nobody here
// wrote) against the real mm and asserts on its NDJSON frames.
func TestACPXReadEditAnswer(t *testing.T) {
	t.Parallel()
	acpx, w, file := acpxWorld(t, "read_edit_answer")
	dir := w.dir

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, acpx, "--cwd", dir, "--approve-all", "--format", "json",
		"--agent", mmBin(t)+" acp", "exec", "Change hello to goodbye in hello.txt")
	cmd.Dir = dir
	cmd.Env = w.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("acpx: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	if got := readFile(t, file); got != "goodbye world\nsecond line\n" {
		t.Errorf("file = %q", got)
	}

	type frame struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Update  map[string]any   `json:"update"`
			Options []map[string]any `json:"options"`
		} `json:"params"`
		Result map[string]any `json:"result"`
	}
	var (
		answer       strings.Builder
		thought      bool
		editPending  bool
		permission   []string
		diffDone     bool
		stopReason   any
		usageUpdates int
	)
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var f frame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("acpx printed a non-JSON line: %q", sc.Text())
		}
		u := f.Params.Update
		switch {
		case f.Method == "session/update" && u["sessionUpdate"] == "agent_thought_chunk":
			thought = true
		case f.Method == "session/update" && u["sessionUpdate"] == "agent_message_chunk":
			answer.WriteString(u["content"].(map[string]any)["text"].(string))
		case f.Method == "session/update" && u["sessionUpdate"] == "tool_call" && u["kind"] == "edit":
			editPending = u["status"] == "pending"
		case f.Method == "session/update" && u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed":
			for _, c := range asSlice(u["content"]) {
				if m, _ := c.(map[string]any); m["type"] == "diff" && m["newText"] == "goodbye world\nsecond line\n" {
					diffDone = true
				}
			}
		case f.Method == "session/update" && u["sessionUpdate"] == "usage_update":
			usageUpdates++
		case f.Method == "session/request_permission":
			for _, o := range f.Params.Options {
				permission = append(permission, o["kind"].(string))
			}
		case f.Result != nil && f.Result["stopReason"] != nil:
			stopReason = f.Result["stopReason"]
		}
	}
	if !thought || !editPending || !diffDone {
		t.Errorf("thought=%v edit pending=%v completed diff=%v", thought, editPending, diffDone)
	}
	if strings.Join(permission, ",") != "allow_once,allow_always,reject_once,reject_always" {
		t.Errorf("permission options = %v", permission)
	}
	if !strings.Contains(answer.String(), "Done: hello.txt now says goodbye world.") {
		t.Errorf("answer = %q", answer.String())
	}
	if stopReason != "end_turn" {
		t.Errorf("stopReason = %v", stopReason)
	}
	if usageUpdates == 0 {
		t.Errorf("no usage_update frame")
	}
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestACPXSessionSurvivesRestart drives acpx's session commands (a
// client nobody here wrote): `sessions new`, a prompt that edits (acpx
// restarts mm and resumes the session), `sessions list` shows it with its
// title from mm's session/list, and a prompt after one more restart sends
// the model the earlier conversation.
func TestACPXSessionSurvivesRestart(t *testing.T) {
	t.Parallel()
	acpx, w, file := acpxWorld(t, "session_restart", "XDG_STATE_HOME="+t.TempDir())
	srv, dir, env := w.srv, w.dir, w.env
	// The queue owner outlives the last command by its ttl and writes
	// acpx's state in HOME on its way out: wait for it before HOME goes.
	t.Cleanup(func() { waitForProcessesOf(t, config.Env(env).Get("HOME"), 15*time.Second) })
	// run runs one acpx command. acpx keeps mm in a queue owner that
	// exits a second after its last command (--ttl 1), so each command
	// starts a new mm; a command that meets the previous owner while it
	// shuts down is told so with a retryable error, and is retried.
	run := func(args ...string) string {
		t.Helper()
		for attempt := 0; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			cmd := exec.CommandContext(ctx, acpx, append([]string{"--cwd", dir, "--approve-all", "--format", "json", "--ttl", "1",
				"--agent", mmBin(t) + " acp"}, args...)...)
			cmd.Dir, cmd.Env = dir, env
			out, err := cmd.CombinedOutput()
			cancel()
			if strings.Contains(string(out), "QUEUE_OWNER_CLOSED") && attempt < 5 {
				time.Sleep(time.Second) // the old owner's ttl
				continue
			}
			if err != nil {
				t.Fatalf("acpx %v: %v\n%s", args, err, out)
			}
			return string(out)
		}
	}
	// lastJSON finds the last line that decodes into v with key present.
	lastJSON := func(out, key string) map[string]any {
		var found map[string]any
		for _, l := range strings.Split(out, "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m[key] != nil {
				found = m
			}
		}
		return found
	}

	created := lastJSON(run("sessions", "new"), "acpxSessionId")
	if created == nil {
		t.Fatal("sessions new printed no session")
	}
	id, _ := created["acpxSessionId"].(string)
	out := run("prompt", "Change hello to goodbye in hello.txt")
	if got := readFile(t, file); got != "goodbye world\nsecond line\n" {
		t.Fatalf("file = %q\n%s", got, out)
	}
	if !strings.Contains(out, `"sessionId":"`+id+`"`) {
		t.Errorf("the prompt did not run in the session acpx created (%s):\n%s", id, out)
	}

	listed := lastJSON(run("sessions", "list"), "sessions")
	ss, _ := listed["sessions"].([]any)
	if len(ss) != 1 {
		t.Fatalf("sessions list = %v", listed)
	}
	s0, _ := ss[0].(map[string]any)
	if s0["sessionId"] != id || s0["title"] != "Change hello to goodbye in hello.txt" || s0["cwd"] != dir {
		t.Errorf("listed session = %v", s0)
	}

	run("prompt", "What did I ask you before?")
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	joined := transcript(last)
	testenv.WantIn(t, "the request after the restarts", joined, "Change hello to goodbye in hello.txt", "assistant: Done: hello.txt now says goodbye world.", "user: What did I ask you before?")
}
