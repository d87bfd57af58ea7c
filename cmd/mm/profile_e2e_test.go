package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestProfiles: a profile holds the known sampling and prompt defaults of
// a model family. It is guessed from the model id (and said in the log),
// its sampling is sent, explicit YAML wins, gpt-oss keeps its reasoning.
func TestProfiles(t *testing.T) {
	t.Parallel()
	field := func(t *testing.T, body json.RawMessage, key string) string {
		var m map[string]json.RawMessage
		json.Unmarshal(body, &m)
		return string(m[key])
	}
	t.Run("guessed qwen3", func(t *testing.T) {
		srv := scenario(t, "short_answer")
		dir := t.TempDir()
		env := mmEnv(t, srv, "MM_MODEL=unsloth/Qwen3-4B-GGUF")
		if _, stderr, code := runInProcess(t, dir, env, "", "-p", "hi"); code != 0 {
			t.Fatal(stderr)
		}
		b := srv.Requests()[0].Body
		if field(t, b, "temperature") != "0.6" || field(t, b, "top_p") != "0.95" || field(t, b, "top_k") != "20" {
			t.Errorf("qwen3 sampling not sent: temperature %s top_p %s top_k %s", field(t, b, "temperature"), field(t, b, "top_p"), field(t, b, "top_k"))
		}
		var logFile string
		for _, e := range env {
			if v, ok := strings.CutPrefix(e, "MM_LOG="); ok {
				logFile = v
			}
		}
		if log, _ := os.ReadFile(logFile); !strings.Contains(string(log), "profile guessed from the model id") || !strings.Contains(string(log), "profile=qwen3") {
			t.Errorf("the guess is not in the log:\n%s", log)
		}
	})
	t.Run("explicit YAML wins", func(t *testing.T) {
		srv := scenario(t, "short_answer")
		dir := t.TempDir()
		testenv.WriteFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "profile: gemma\nsampling:\n  temperature: 0.1\n")
		if _, stderr, code := runInProcess(t, dir, mmEnv(t, srv, "MM_MODEL=unsloth/Qwen3-4B-GGUF"), "", "-p", "hi"); code != 0 {
			t.Fatal(stderr)
		}
		b := srv.Requests()[0].Body
		if field(t, b, "temperature") != "0.1" || field(t, b, "top_k") != "64" {
			t.Errorf("temperature %s (want the YAML's 0.1), top_k %s (want gemma's 64, the profile named in the config)", field(t, b, "temperature"), field(t, b, "top_k"))
		}
	})
	t.Run("no profile: mm's defaults", func(t *testing.T) {
		srv := scenario(t, "short_answer")
		if _, stderr, code := runInProcess(t, t.TempDir(), mmEnv(t, srv), "", "-p", "hi"); code != 0 {
			t.Fatal(stderr)
		}
		b := srv.Requests()[0].Body
		if field(t, b, "temperature") != "0" || field(t, b, "top_p") != "0.9" || field(t, b, "top_k") != "" {
			t.Errorf("fake-model: temperature %s top_p %s top_k %s", field(t, b, "temperature"), field(t, b, "top_p"), field(t, b, "top_k"))
		}
	})
	for _, c := range []struct{ model, keep string }{{"ggml-org/gpt-oss-20b-GGUF", "I should read hello.txt first."}, {"unsloth/Qwen3-4B-GGUF", ""}} {
		t.Run("reasoning of "+c.model, func(t *testing.T) {
			srv := scenario(t, "reasoning_tool_answer")
			dir := t.TempDir()
			testenv.WriteFile(t, filepath.Join(dir, "hello.txt"), "hello\n")
			if _, stderr, code := runInProcess(t, dir, mmEnv(t, srv, "MM_MODEL="+c.model), "", "-p", "read hello.txt"); code != 0 {
				t.Fatal(stderr)
			}
			msgs := srv.Requests()[1].Messages
			var asst string
			for _, m := range msgs {
				if m.Role == "assistant" {
					asst = m.ReasoningContent
				}
			}
			if asst != c.keep {
				t.Errorf("reasoning sent back = %q, want %q", asst, c.keep)
			}
		})
	}
	t.Run("unknown profile refused", func(t *testing.T) {
		dir := t.TempDir()
		testenv.WriteFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "profile: qwen9\n")
		_, stderr, code := runInProcess(t, dir, mmEnv(t, nil), "", "-p", "hi")
		if code != 2 || !strings.Contains(stderr, `profile "qwen9" is not one of gemma, gpt-oss, granite, llama, mistral, qwen2.5-coder, qwen3`) {
			t.Errorf("exit %d:\n%s", code, stderr)
		}
	})
}
