package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSaveChoice: the choice lands in the user's own file, created with
// its directory when missing; saved again it replaces the three keys and
// keeps every other key and comment; UserChoice reads back what was
// saved.
func TestSaveChoice(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := Env{"HOME=" + home, "USERPROFILE=" + home, "MM_BASE_URL=http://elsewhere/v1"}
	want := filepath.Join(home, ".config", "mm", "agent.yaml")

	path, err := SaveChoice(env, Choice{Provider: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen3:4b"})
	if err != nil || path != want {
		t.Fatalf("SaveChoice = %q, %v; want %q", path, err, want)
	}
	got, _, err := UserChoice(env)
	if err != nil || got != (Choice{Provider: "ollama", BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen3:4b"}) {
		t.Fatalf("UserChoice = %+v, %v (the environment's MM_BASE_URL must not count)", got, err)
	}

	const kept = "# my settings\nmodel: old # the small one\nyolo: true\nsampling:\n  temperature: 0.2\n"
	if err := os.WriteFile(want, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := SaveChoice(env, Choice{BaseURL: "http://127.0.0.1:8080/v1", Model: "new"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(want)
	text := string(b)
	for _, s := range []string{"# my settings", "yolo: true", "temperature: 0.2", "model: new # the small one", "baseURL: http://127.0.0.1:8080/v1"} {
		if !strings.Contains(text, s) {
			t.Errorf("the file lost or lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "provider") || strings.Contains(text, "old") {
		t.Errorf("an empty provider is mm's default, the old model is gone:\n%s", text)
	}
	c, err := Load(Env{}, want)
	if err != nil || c.Model != "new" || !c.Yolo {
		t.Errorf("the saved file does not load as written: %+v, %v", c, err)
	}
}

// TestSaveChoiceKeepsABrokenFile: a file mm cannot parse is left byte for
// byte, and the error names it.
func TestSaveChoiceKeepsABrokenFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := Env{"HOME=" + home, "USERPROFILE=" + home}
	path := filepath.Join(home, ".config", "mm", "agent.yaml")
	os.MkdirAll(filepath.Dir(path), 0o755)
	const broken = "model: [unclosed\n"
	os.WriteFile(path, []byte(broken), 0o644)
	if _, err := SaveChoice(env, Choice{Model: "x"}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("SaveChoice over a broken file: %v", err)
	}
	if _, _, err := UserChoice(env); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("UserChoice of a broken file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != broken {
		t.Errorf("the broken file was rewritten: %q", b)
	}
}
