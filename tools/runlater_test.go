package tools_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/tools"
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
		if got := tools.RunsLater(c.rel) != ""; got != c.later {
			t.Errorf("RunsLater(%q) = %v, want %v", c.rel, got, c.later)
		}
	}
}

// A write to a file that runs later is asked in every mode — yolo,
// accept-edits, an allow rule, an "always" answer, a hook's allow — and
// an "always" answer to it counts once. A deny rule, plan mode and a
// "never" still refuse without asking.
func TestPolicyAsksForFilesThatRunLater(t *testing.T) {
	root := t.TempDir()
	write := func(rel string) tools.Approval {
		abs := filepath.Join(root, rel)
		return tools.Approval{Tool: "write_file", Kind: tools.KindEdit, Caps: tools.Reads | tools.WritesWorkspace, Title: "Write " + rel, Key: "write_file", Subject: rel,
			Diffs: []tools.Diff{{Path: abs}}, Locations: []tools.Location{{Path: abs}}}
	}
	named := filepath.Join(root, "scripts", "check.sh")
	newPolicy := func(yolo bool, allow, deny []string) *tools.Policy {
		p := tools.NewPolicy(yolo, allow, deny)
		p.WatchRunLater(&tools.RunLater{Root: root, Named: map[string]string{named: "a hook mm runs"}})
		return p
	}
	for _, mode := range []tools.Mode{tools.ModeYolo, tools.ModeAcceptEdits, tools.ModeAsk} {
		p := newPolicy(false, []string{"write_file"}, nil)
		p.SetMode(mode)
		p.Remember(write("main.go"), true)
		for _, rel := range []string{".git/hooks/pre-commit", ".vscode/tasks.json", "scripts/check.sh"} {
			a := write(rel)
			a.Hook = tools.HookAllow
			if _, ok := p.Decide(a); ok {
				t.Errorf("%s: %s decided without asking", mode, rel)
			}
			var asked string
			d, err := p.Approve(context.Background(), a, func(_ context.Context, req tools.Approval) (tools.Answer, error) {
				asked = req.Title
				return tools.AllowAlways, nil
			})
			if err != nil || !d.Allowed || !strings.Contains(asked, "⚠ "+rel+" runs later") {
				t.Errorf("%s: %s: allowed=%v, question %q", mode, rel, d.Allowed, asked)
			}
			if _, ok := p.Decide(a); ok {
				t.Errorf("%s: an always answer to %s was remembered", mode, rel)
			}
		}
		if d, ok := p.Decide(write("main.go")); !ok || !d.Allowed {
			t.Errorf("%s: an ordinary file asks", mode)
		}
	}
	// nobody to ask: refused, saying why
	p := newPolicy(true, nil, nil)
	d, _ := p.Approve(context.Background(), write(".envrc"), nil)
	if d.Allowed || !strings.Contains(d.Reason, ".envrc runs later") || !strings.Contains(d.Reason, "do not answer for it") {
		t.Errorf("no one to ask: %+v", d)
	}
	// refusals still refuse without a question
	p = newPolicy(false, nil, []string{"write_file:.git/*"})
	if d, ok := p.Decide(write(".git/config")); !ok || d.Allowed {
		t.Errorf("the deny rule did not win: %+v %v", d, ok)
	}
	p.SetMode(tools.ModePlan)
	if d, ok := p.Decide(write(".envrc")); !ok || d.Allowed {
		t.Errorf("plan mode asked: %+v %v", d, ok)
	}
}

// A path that reaches a file that runs later through a link — a
// directory linked to .git, a file linked to .envrc, dangling or not — is
// refused without a question in every mode, the reason naming the file it
// leads to; an approval that also names where it lands (bash lists both)
// is asked instead. Landing refuses the same at the moment of writing.
func TestPolicyRefusesWritesThroughLinksToFilesThatRunLater(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644)
	for link, target := range map[string]string{"cfg": ".git", "docs": filepath.Join(root, ".git"), "notes.txt": ".envrc", "lib": "src", "hook.sh": "scripts/check.sh"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skip("no symlinks here:", err)
		}
	}
	named := filepath.Join(root, "scripts", "check.sh")
	write := func(rel string, more ...string) tools.Approval {
		abs := filepath.Join(root, rel)
		a := tools.Approval{Tool: "write_file", Kind: tools.KindEdit, Caps: tools.Reads | tools.WritesWorkspace, Title: "Write " + rel, Key: "write_file", Subject: rel,
			Diffs: []tools.Diff{{Path: abs}}, Locations: []tools.Location{{Path: abs}}}
		for _, m := range more {
			a.Locations = append(a.Locations, tools.Location{Path: filepath.Join(root, m)})
		}
		return a
	}
	for _, mode := range []tools.Mode{tools.ModeYolo, tools.ModeAcceptEdits} {
		p := tools.NewPolicy(false, []string{"write_file"}, nil)
		p.SetMode(mode)
		p.WatchRunLater(&tools.RunLater{Root: root, Named: map[string]string{named: "a hook mm runs"}})
		for rel, to := range map[string]string{"cfg/hooks/pre-commit": ".git/hooks/pre-commit", "notes.txt": ".envrc", "docs/config": ".git/config", "hook.sh": "scripts/check.sh"} {
			d, ok := p.Decide(write(rel))
			if !ok || d.Allowed || !strings.Contains(d.Reason, rel+" leads, through a link, to "+to+", which runs later") || !strings.Contains(d.Reason, "write "+to+" itself") {
				t.Errorf("%s: %s: decided=%v %+v, want refused naming %s", mode, rel, ok, d, to)
			}
			if err := p.Landing(filepath.Join(root, rel), tools.Real(filepath.Join(root, rel))); !errors.Is(err, tools.ErrRunsLater) {
				t.Errorf("%s: Landing(%s) = %v, want ErrRunsLater", mode, rel, err)
			}
		}
		if _, ok := p.Decide(write("cfg/hooks/pre-commit", ".git/hooks/pre-commit")); ok {
			t.Errorf("%s: an approval naming where it lands was not asked", mode)
		}
		if d, ok := p.Decide(write("lib/main.go")); !ok || !d.Allowed {
			t.Errorf("%s: a link to an ordinary directory: %+v %v", mode, d, ok)
		}
		if err := p.Landing(filepath.Join(root, "lib/main.go"), filepath.Join(root, "src/main.go")); err != nil {
			t.Errorf("%s: Landing through an ordinary link: %v", mode, err)
		}
		if err := p.Landing(filepath.Join(root, ".envrc"), filepath.Join(root, ".envrc")); err != nil {
			t.Errorf("%s: Landing on the very file asked about: %v", mode, err)
		}
	}
}

// TestREADMEListsFilesThatRunLater: the README's list of files that run
// later names every directory and file of the tables, so what users read
// is what mm asks about.
func TestREADMEListsFilesThatRunLater(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for dir := range tools.RunLaterDirs {
		if !strings.Contains(readme, "`"+dir+"/`") {
			t.Errorf("README does not list `%s/`", dir)
		}
	}
	for file := range tools.RunLaterFiles {
		if !strings.Contains(readme, "`"+file+"`") {
			t.Errorf("README does not list `%s`", file)
		}
	}
	for _, more := range []string{"`*.code-workspace`", "`.github/workflows/*`", "`.github/actions/`", "a `.git` file"} {
		if !strings.Contains(readme, more) {
			t.Errorf("README does not list %s", more)
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
	r := &tools.RunLater{Root: dir}
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
// a tracked directory (core.hooksPath) makes the files there hooks.
func TestRunLaterHooksPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &tools.RunLater{Root: dir}
	hook := filepath.Join(dir, "scripts", "hooks", "pre-commit")
	if why := r.Why(hook); why != "" {
		t.Fatalf("without core.hooksPath: %q, want nothing", why)
	}
	config := "[core]\n\trepositoryformatversion = 0\n\thooksPath = scripts/hooks\n[remote \"origin\"]\n\turl = x\n"
	if err := os.WriteFile(filepath.Join(dir, ".git", "config"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if why := r.Why(hook); !strings.Contains(why, "core.hooksPath") {
		t.Errorf("Why(scripts/hooks/pre-commit) = %q, want core.hooksPath named", why)
	}
	if why := r.Why(filepath.Join(dir, "scripts", "build.sh")); why != "" {
		t.Errorf("a script beside the hooks: %q, want nothing", why)
	}
}
