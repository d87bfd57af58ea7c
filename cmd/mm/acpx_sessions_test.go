package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPXSessionSurvivesRestart drives acpx's session commands (a
// client nobody here wrote): `sessions new`, a prompt that edits (acpx
// restarts mm and resumes the session), `sessions list` shows it with its
// title from mm's session/list, and a prompt after one more restart sends
// the model the earlier conversation.
func TestACPXSessionSurvivesRestart(t *testing.T) {
	t.Parallel()
	acpx := testenv.NeedTool(t, "acpx")
	srv := scenario(t, "session_restart")
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	writeFile(t, file, "hello world\nsecond line\n")
	env := mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir())
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
	var said []string
	for _, m := range last.Messages {
		said = append(said, m.Role+": "+m.Content)
	}
	joined := strings.Join(said, "\n")
	for _, want := range []string{"Change hello to goodbye in hello.txt", "assistant: Done: hello.txt now says goodbye world.", "user: What did I ask you before?"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the request after the restarts lacks %q:\n%s", want, joined)
		}
	}
}
