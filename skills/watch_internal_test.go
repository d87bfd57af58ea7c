package skills

import (
	"os"
	"path/filepath"
	"testing"
)

// Watching a skills folder that does not exist yet starts at its nearest
// existing parent and walks down one folder at a time towards it.
func TestWatchWalksDownToTheFolder(t *testing.T) {
	ws := t.TempDir()
	skillsDir := filepath.Join(ws, ".mm", "skills")
	if got := nearestExisting(skillsDir); got != ws {
		t.Errorf("nearestExisting(%s) = %s, want the workspace", skillsDir, got)
	}
	if got := childOnPath(ws, skillsDir); got != filepath.Join(ws, ".mm") {
		t.Errorf("childOnPath(ws, ws/.mm/skills) = %s, want ws/.mm", got)
	}
	if got := childOnPath(filepath.Join(ws, ".mm"), skillsDir); got != skillsDir {
		t.Errorf("childOnPath(ws/.mm, ws/.mm/skills) = %s", got)
	}
	if err := os.MkdirAll(skillsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := nearestExisting(skillsDir); got != skillsDir {
		t.Errorf("nearestExisting of an existing folder = %s", got)
	}
	if got := nearestExisting("/no-such-root-folder/a/b"); got != "/" {
		t.Errorf("nearestExisting under a missing root folder = %s, want /", got)
	}
}
