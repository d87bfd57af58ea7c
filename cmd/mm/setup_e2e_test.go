package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// setupEnv is the environment of a first run: a home of its own, the
// fake server where MM_BASE_URL says (no MM_MODEL or MM_PROVIDER: the
// user has chosen nothing yet).
func setupEnv(t *testing.T, srv *llmtest.Server) (env []string, userConfig string) {
	home := t.TempDir()
	env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MM_BASE_URL=" + srv.URL()}
	return env, filepath.Join(home, ".config", "mm", "agent.yaml")
}

// chatModels are the models the chat requests asked for, in order.
func chatModels(srv *llmtest.Server) []string {
	var ms []string
	for _, r := range srv.Requests() {
		ms = append(ms, r.Model)
	}
	return ms
}

// TestSetupOnATerminal: `mm setup` on a real terminal lists the models of
// the server it finds, the arrow keys move, Enter picks; the pick is
// checked with a real tool-call round trip and saved in the user's own
// config — not in the workspace. The next `mm setup` shows that choice
// first, selected: Enter keeps it.
func TestSetupOnATerminal(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "setup")
	env, userConfig := setupEnv(t, srv)
	dir := t.TempDir()

	tm := startTerm(t, dir, env, "setup")
	tm.waitFor("Choose the model mm uses")
	tm.waitFor("fake-b")
	tm.send("\x1b[B") // ↓
	tm.send("\r")
	tm.waitFor("tool calls: a real round trip")
	tm.waitFor("saved in " + userConfig)
	waitExit(t, tm, 0)
	if got := readFile(t, userConfig); got != "provider: llamacpp\nbaseURL: "+srv.URL()+"\nmodel: fake-b\n" {
		t.Errorf("the user's config:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, ".mm")); err == nil {
		t.Error("mm setup wrote into the workspace")
	}
	if got := strings.Join(chatModels(srv), " "); got != "fake-b fake-b" {
		t.Errorf("the round trip asked %q, want the chosen model twice (call, answer)", got)
	}

	again := startTerm(t, dir, env, "setup")
	again.waitFor("(current)")
	list := again.screen()
	list = list[strings.Index(list, "Choose the model"):]
	if b, a := strings.Index(list, "fake-b"), strings.Index(list, "fake-a"); b < 0 || a < b || !strings.Contains(list, "› fake-b") {
		t.Errorf("the current choice is not first and selected:\n%q", list)
	}
	again.send("\r")
	again.waitFor("saved in " + userConfig)
	waitExit(t, again, 0)
	if got := readFile(t, userConfig); !strings.Contains(got, "model: fake-b\n") {
		t.Errorf("Enter did not keep the current choice:\n%s", got)
	}
}

// waitExit waits for the terminal's mm to exit with code.
func waitExit(t *testing.T, tm *term, code int) {
	t.Helper()
	select {
	case <-tm.done:
	case <-time.After(30 * time.Second):
		t.Fatal("mm setup did not exit")
	}
	got := 0
	if ee, ok := tm.err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if tm.err != nil {
		t.Fatal(tm.err)
	}
	if got != code {
		t.Errorf("mm exited %d, want %d", got, code)
	}
}

// TestSetupWithoutATerminal: with no terminal (a script, a pipe) the
// models are numbered and the number is read; an answer that is not one
// asks again. The choice goes to the user's config, never into the
// workspace's .mm/agent.yaml, which stays byte for byte. The next run
// numbers the current choice first; input that ends chooses nothing.
func TestSetupWithoutATerminal(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "setup")
	env, userConfig := setupEnv(t, srv)
	dir := t.TempDir()
	const ws = "model: the-workspace-model\n"
	testenv.WriteFile(t, filepath.Join(dir, ".mm", "agent.yaml"), ws)

	out, stderr, code := runInProcess(t, dir, env, "3\nx\n2\n", "setup")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	testenv.WantIn(t, "stdout", out, "  1) fake-a  llama.cpp at ", "  2) fake-b  llama.cpp at ", `"3" is not one of the numbers.`, `"x" is not one of the numbers.`, "saved in "+userConfig)
	if got := readFile(t, userConfig); !strings.Contains(got, "model: fake-b\n") {
		t.Errorf("the user's config:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, ".mm", "agent.yaml")); got != ws {
		t.Errorf("the workspace's config changed:\n%s", got)
	}

	// A client's terminal auth appends the method's args to the agent's
	// command: mm acp setup is mm setup.
	out, _, code = runInProcess(t, dir, env, "\n", "acp", "setup")
	if code != 0 || !strings.Contains(out, "  1) fake-b  llama.cpp at ") || !strings.Contains(out, "(current)\n  2) fake-a") {
		t.Errorf("the second run does not number the current choice first (exit %d):\n%s", code, out)
	}

	before := readFile(t, userConfig)
	out, stderr, code = runInProcess(t, dir, env, "", "setup")
	if code != 1 || !strings.Contains(stderr, "no model chosen") || readFile(t, userConfig) != before {
		t.Errorf("input that ends: exit %d, stderr %q, config now:\n%s", code, stderr, readFile(t, userConfig))
	}
}
