package runlater

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mm-agent/mm/tools"
)

// TestLook: one walk finds what runs later without entering it, and the
// links named like such files wherever they are — inside .git too — but
// looks neither into dependencies nor into git's object stores; a root
// given through a link is looked at all the same.
func TestLook(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	for _, d := range []string{".git/hooks", ".git/objects/ab", ".git/modules/sub/objects", ".vscode", "src/.git", "node_modules/pkg", "scripts", "bare.git/objects"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	for _, f := range []string{"README.md", "notes.txt", ".gitattributes", ".vscode/tasks.json", "scripts/check.sh", "node_modules/pkg/.envrc", "bare.git/objects/.envrc"} {
		os.WriteFile(filepath.Join(ws, f), nil, 0o644)
	}
	for link, target := range map[string]string{
		".envrc":                          "notes.txt",
		".git/hooks/pre-commit":           "../../scripts/check.sh",
		".git/objects/ab/.envrc":          "../../../notes.txt",
		".git/modules/sub/objects/.envrc": "../../../../notes.txt",
		".idea":                           "scripts",
		"src/ordinary.txt":                "../notes.txt",
	} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Skip("no symlinks:", err)
		}
	}
	via := filepath.Join(dir, "via")
	if err := os.Symlink("ws", via); err != nil {
		t.Skip("no symlinks:", err)
	}
	for _, root := range []string{ws, via} {
		f := Look(root)
		var entries, links, targets []string
		for _, e := range f.Entries {
			entries = append(entries, filepath.ToSlash(e.Rel))
			if real := tools.Real(ws); e.Path != filepath.Join(real, e.Rel) {
				t.Errorf("Look(%s): %s at %s, want it below %s", root, e.Rel, e.Path, real)
			}
		}
		for _, l := range f.Links {
			links = append(links, filepath.ToSlash(l.Rel)+" -> "+l.Target)
			targets = append(targets, l.Real)
		}
		slices.Sort(entries)
		slices.Sort(links)
		if want := []string{".envrc", ".git", ".gitattributes", ".idea", ".vscode", "bare.git/objects/.envrc", "src/.git"}; !slices.Equal(entries, want) {
			t.Errorf("Look(%s) entries = %q, want %q", root, entries, want)
		}
		if want := []string{".envrc -> notes.txt", ".git/hooks/pre-commit -> ../../scripts/check.sh", ".idea -> scripts"}; !slices.Equal(links, want) {
			t.Errorf("Look(%s) links = %q, want %q", root, links, want)
		}
		if !slices.Contains(targets, tools.Real(filepath.Join(ws, "scripts", "check.sh"))) {
			t.Errorf("Look(%s) targets = %q, want scripts/check.sh among them", root, targets)
		}
	}
}
