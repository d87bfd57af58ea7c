package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestSetupNoServer: with no model server on the machine, mm setup says
// in one line what it tried and how to start one on this system, exits
// 1, and writes nothing.
func TestSetupNoServer(t *testing.T) {
	t.Parallel()
	isolate := noNetwork(t)
	home := t.TempDir()
	cmd := exec.Command(mmBin(t), "setup")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	isolate(cmd)
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("mm setup: %v, want exit 1\n%s%s", err, out.String(), errb.String())
	}
	line := errb.String()
	if strings.Count(line, "\n") != 1 || out.Len() != 0 {
		t.Errorf("want one line on stderr and nothing on stdout; stdout %q, stderr %q", out.String(), line)
	}
	hint := llm.StartHint()
	testenv.WantIn(t, "the line", line, "no model server answers on this machine", "llama.cpp 127.0.0.1:8080", "vLLM 127.0.0.1:8000", hint, "then run `mm setup` again")
	if _, err := os.Stat(filepath.Join(home, ".config")); err == nil {
		t.Error("mm setup wrote a config with nothing chosen")
	}
}
