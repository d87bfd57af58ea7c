package runlater

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// The workspace is granted entry by entry: what runs later, links, and
// .github/workflows and .github/actions are left out.
func TestWorkspaceGrants(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git/hooks", ".mm", ".vscode", "src/.git", ".github/workflows", ".github/actions/setup", ".github/ISSUE_TEMPLATE", ".claude", ".circleci", "docs"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, f := range []string{"README.md", ".envrc", ".gitattributes", "x.code-workspace", ".github/CODEOWNERS", ".mcp.json", ".gitlab-ci.yml"} {
		os.WriteFile(filepath.Join(root, f), nil, 0o644)
	}
	os.Symlink("/etc", filepath.Join(root, "etc-link"))
	dirs, files := Writable(root)
	if got, want := relSorted(root, dirs), []string{".github/ISSUE_TEMPLATE", "docs", "src"}; !slices.Equal(got, want) {
		t.Errorf("dirs = %q, want %q", got, want)
	}
	if got, want := relSorted(root, files), []string{".github/CODEOWNERS", "README.md"}; !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

// TestWorkspaceGrantsLeaveOutLinkTargets: what a file that runs later
// links to (.envrc -> notes.txt, a hook -> scripts/hooks/check.sh) and
// the directory core.hooksPath names are not granted, though their names
// are ordinary; the directories above them are granted entry by entry.
func TestWorkspaceGrantsLeaveOutLinkTargets(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git/hooks", "scripts/hooks", "scripts/lib", "githooks", "src"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, f := range []string{"notes.txt", "README.md", "scripts/hooks/check.sh", "scripts/build.sh", "githooks/pre-push"} {
		os.WriteFile(filepath.Join(root, f), nil, 0o644)
	}
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", root, "config", "core.hooksPath", "githooks").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	for link, target := range map[string]string{".envrc": "notes.txt", ".git/hooks/pre-commit": "../../scripts/hooks/check.sh"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	dirs, files := Writable(root)
	if got, want := relSorted(root, dirs), []string{"scripts/lib", "src"}; !slices.Equal(got, want) {
		t.Errorf("dirs = %q, want %q", got, want)
	}
	if got, want := relSorted(root, files), []string{"README.md", "scripts/build.sh"}; !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

// relSorted is ps relative to root, sorted.
func relSorted(root string, ps []string) []string {
	var out []string
	for _, p := range ps {
		r, _ := filepath.Rel(root, p)
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}
