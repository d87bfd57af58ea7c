package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPXReadEditAnswer runs the real acpx CLI (a client nobody here
// wrote) against the real mm and asserts on its NDJSON frames.
func TestACPXReadEditAnswer(t *testing.T) {
	t.Parallel()
	acpx := testenv.NeedTool(t, "acpx")
	srv := scenario(t, "read_edit_answer")
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	writeFile(t, file, "hello world\nsecond line\n")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, acpx, "--cwd", dir, "--approve-all", "--format", "json",
		"--agent", mmBin(t)+" acp", "exec", "Change hello to goodbye in hello.txt")
	cmd.Dir = dir
	cmd.Env = mmEnv(t, srv)
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
