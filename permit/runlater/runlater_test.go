package runlater_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/permit/runlater"
)

func TestRunsLater(t *testing.T) {
	for _, c := range []struct {
		rel   string
		later bool
	}{
		{".mm/agent.yaml", true},
		{".mm/hooks/no-rm.sh", true},
		{".git/config", true},
		{".git/hooks/pre-commit", true},
		{"vendor/lib/.git/hooks/post-checkout", true}, // a submodule's
		{"sub/.git", true},
		{".gitattributes", true},
		{"docs/.gitattributes", true},
		{".gitmodules", true},
		{".vscode/settings.json", true},
		{".vscode/tasks.json", true},
		{"app.code-workspace", true},
		{".envrc", true},
		{".idea/workspace.xml", true},
		{".devcontainer/devcontainer.json", true},
		{".husky/pre-commit", true},
		{".github/workflows/ci.yml", true},
		{".cargo/config.toml", true},
		{".nvim.lua", true},
		{".claude/settings.json", true},
		{".claude/hooks/check.sh", true},
		{".mcp.json", true},
		{".cursor/mcp.json", true},
		{".gemini/settings.json", true},
		{".continue/config.yaml", true},
		{".hg/hgrc", true},
		{".jj/repo/config.toml", true},
		{".gitlab-ci.yml", true},
		{".circleci/config.yml", true},
		{".github/actions/setup/action.yml", true},
		{".github/actions/setup/dist/index.js", true},
		{".github/dependabot.yml", false},
		{"docs/actions/x.yml", false},
		{".ENVRC", true}, // case-insensitive file systems
		{"./.git/../.git/config", true},
		{"main.go", false},
		{"README.md", false},
		{".github/ISSUE_TEMPLATE.md", false},
		{"gitconfig.txt", false},
		{"src/mm/agent.yaml", false},
		{"../other/.git/config", false}, // outside: refused elsewhere
		{"Makefile", false},
	} {
		if got := runlater.RunsLater(c.rel) != ""; got != c.later {
			t.Errorf("RunsLater(%q) = %v, want %v", c.rel, got, c.later)
		}
	}
}

// TestSecurityPageListsFilesThatRunLater: the security page's list of files
// that run later names every directory and file of the tables, so what
// users read is what mm asks about.
func TestSecurityPageListsFilesThatRunLater(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.ToLower(string(b))
	for dir := range runlater.RunLaterDirs {
		if !strings.Contains(readme, "`"+dir+"/`") {
			t.Errorf("docs/security.md does not list `%s/`", dir)
		}
	}
	for file := range runlater.RunLaterFiles {
		if !strings.Contains(readme, "`"+file+"`") {
			t.Errorf("docs/security.md does not list `%s`", file)
		}
	}
	for suffix := range runlater.RunLaterSuffixes {
		if !strings.Contains(readme, "`*"+suffix+"`") {
			t.Errorf("docs/security.md does not list `*%s`", suffix)
		}
	}
	for _, more := range []string{"`.github/workflows/*`", "`.forgejo/workflows/*`", "`.gitea/workflows/*`", "`.github/actions/`", "a `.git` file", "`*.pth`", "`sitecustomize.py`", "`usercustomize.py`"} {
		if !strings.Contains(readme, more) {
			t.Errorf("docs/security.md does not list %s", more)
		}
	}
}

// TestRunLaterLinkedTo: a file that runs later can be a link to an
// ordinary file — a repository can arrive with .envrc -> notes.txt, and
// people link git hooks to scripts they track. Writing the target writes
// the file that runs later, so it runs later too; a file nothing links
// to does not.
func TestRunLaterLinkedTo(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{".git/hooks", "scripts", "config/editor", "src"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		".envrc":                "notes.txt",
		".git/hooks/pre-commit": "../../scripts/check.sh",
		".vscode":               "config/editor",
		"src/ordinary-link.txt": "../readme.txt", // not a file that runs later
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	r := &runlater.RunLater{Root: dir}
	for _, c := range []struct {
		rel, want string
	}{
		{"notes.txt", ".envrc is a link to it: direnv"},
		{"scripts/check.sh", ".git/hooks/pre-commit is a link to it: git's own directory"},
		{"config/editor/tasks.json", ".vscode is a link to it: editor settings"},
		{"readme.txt", ""},
		{"scripts/other.sh", ""},
		{"config/other.json", ""},
	} {
		got := r.Why(filepath.Join(dir, c.rel))
		if c.want == "" && got != "" || c.want != "" && !strings.HasPrefix(got, c.want) {
			t.Errorf("Why(%s) = %q, want %q…", c.rel, got, c.want)
		}
	}
}

// TestRunLaterHooksPath: a repository whose config points git's hooks at
// a tracked directory (core.hooksPath) makes the files there hooks — as
// git reads the config, so a section and its key on one line count too.
func TestRunLaterHooksPath(t *testing.T) {
	for name, config := range map[string]string{
		"usual":    "[core]\n\thooksPath = scripts/hooks\n[remote \"origin\"]\n\turl = x\n",
		"one line": "[core] hooksPath = scripts/hooks\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			gitInit(t, dir)
			r := &runlater.RunLater{Root: dir}
			hook := filepath.Join(dir, "scripts", "hooks", "pre-commit")
			if why := r.Why(hook); why != "" {
				t.Fatalf("without core.hooksPath: %q, want nothing", why)
			}
			f, err := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(config)
			f.Close()
			if why := r.Why(hook); !strings.Contains(why, "core.hooksPath") {
				t.Errorf("Why(scripts/hooks/pre-commit) = %q, want core.hooksPath named", why)
			}
			if why := r.Why(filepath.Join(dir, "scripts", "build.sh")); why != "" {
				t.Errorf("a script beside the hooks: %q, want nothing", why)
			}
		})
	}
}

// gitInit makes dir a git repository.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
}
