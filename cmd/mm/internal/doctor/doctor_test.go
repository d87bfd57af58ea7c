package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/engine/llm"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTemplateFix: each server gets the change that makes its tool
// calls work, not a generic line.
func TestTemplateFix(t *testing.T) {
	for provider, want := range map[string]string{
		llm.ProviderLlamaCpp: "--jinja",
		llm.ProviderDMR:      "--jinja",
		llm.ProviderOllama:   "ollama show MODEL",
		llm.ProviderVLLM:     "--enable-auto-tool-choice",
		llm.ProviderLMStudio: "tool-capable",
		"other":              "OpenAI tool calls",
	} {
		if got := templateFix(provider); !strings.Contains(got, want) {
			t.Errorf("templateFix(%s) = %q, want it to say %q", provider, got, want)
		}
	}
}

// TestLinesAndExitCode: one line per check with its fix after a dash;
// any failed check exits 1, notes alone do not.
func TestLinesAndExitCode(t *testing.T) {
	var out bytes.Buffer
	d := &doctor{out: &out}
	d.ok("config", "%s", "agent.yaml")
	d.note("skills", "none found", "put NAME/SKILL.md files in .mm/skills")
	if code := d.finish(); code != exitcode.OK {
		t.Fatalf("notes only: exit %d", code)
	}
	d.fail("model", "x is not served", "set model")
	if code := d.finish(); code != exitcode.Failed {
		t.Fatalf("a failed check: exit %d", code)
	}
	want := "✓ config: agent.yaml\n• skills: none found — put NAME/SKILL.md files in .mm/skills\n✗ model: x is not served — set model\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
