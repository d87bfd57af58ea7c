package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/skills"
)

// docsBlock returns the first fenced block of kind lang after marker in
// the page of docs/.
func docsBlock(t *testing.T, page, marker, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("docs/%s lacks %q", page, marker)
	}
	_, block, ok := strings.Cut(after, "```"+lang+"\n")
	if !ok {
		t.Fatalf("docs/%s: no ```%s block after %q", page, lang, marker)
	}
	block, _, _ = strings.Cut(block, "```")
	return block
}

// TestDocsExamplesWork: the hook example of docs/hooks.md really denies
// an rm, and the skill example of docs/skills.md really parses: the
// manual does not lie.
func TestDocsExamplesWork(t *testing.T) {
	t.Parallel()
	s, err := skills.Parse([]byte(docsBlock(t, "skills.md", "## Writing one", "markdown")), "x")
	if err != nil || s.Name != "release-notes" || s.Hint != "version, e.g. v1.2" || len(s.Keywords) != 2 {
		t.Errorf("the skill example of docs/skills.md: %+v, %v", s, err)
	}

	srv := scenario(t, "hook_deny_rm")
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "hello.txt"), "hello\n")
	hook := filepath.Join(dir, ".mm", "hooks", "no-rm.sh")
	testenv.WriteFile(t, hook, docsBlock(t, "hooks.md", "An example, `.mm/hooks/no-rm.sh`", "sh"))
	os.Chmod(hook, 0o755)
	testenv.WriteFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "hooks:\n  preToolUse: [{command: [./.mm/hooks/no-rm.sh], tools: [bash]}]\n")
	_, stderr, _ := runInProcess(t, dir, trusted(t, dir, mmEnv(t, srv)), "", "--yes", "-p", "delete hello.txt")
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); err != nil {
		t.Errorf("the hook of docs/hooks.md let rm run:\n%s", stderr)
	}
	if !strings.Contains(stderr, "a hook denied bash: deleting files is forbidden here") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestDocsAskedAgentLoads: the historian of docs/agents.md (Other
// agents) is an agent file mm accepts.
func TestDocsAskedAgentLoads(t *testing.T) {
	dir := t.TempDir()
	b, _ := os.ReadFile(filepath.Join("..", "..", "docs", "agents.md"))
	_, block, _ := strings.Cut(string(b), "# .mm/historian.yaml\n")
	block, _, _ = strings.Cut(block, "```")
	testenv.WriteFile(t, filepath.Join(dir, "historian.yaml"), block)
	testenv.WriteFile(t, filepath.Join(dir, "agent.yaml"), "agents: {historian: historian.yaml}\n")
	c, err := config.Load(nil, filepath.Join(dir, "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Agents["historian"].Config; h.Description == "" || !config.On(h.FetchContentTool, false) {
		t.Errorf("historian = %+v", h)
	}
}
