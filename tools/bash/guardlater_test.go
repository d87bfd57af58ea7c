package bash

import (
	"os"
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
	dirs, files := workspaceGrants(root)
	rel := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			r, _ := filepath.Rel(root, p)
			out = append(out, r)
		}
		slices.Sort(out)
		return out
	}
	if got, want := rel(dirs), []string{".github/ISSUE_TEMPLATE", "docs", "src"}; !slices.Equal(got, want) {
		t.Errorf("dirs = %q, want %q", got, want)
	}
	if got, want := rel(files), []string{".github/CODEOWNERS", "README.md"}; !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}
