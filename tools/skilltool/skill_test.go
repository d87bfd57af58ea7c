package skilltool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/skills"
	"github.com/mm-agent/mm/tools/skilltool"
)

func TestReadSkill(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "release-notes"), 0o755)
	os.WriteFile(filepath.Join(dir, "release-notes", "SKILL.md"), []byte("---\nname: release-notes\ndescription: Notes from git log.\nkeywords: [release]\n---\n1. Run git log.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "release-notes", "template.md"), []byte("## vX\n"), 0o644)
	lib := skills.NewLibrary(dirSource(dir), skills.Shipped())
	tool := skilltool.New(lib)

	if d := tool.Description(); !strings.Contains(d, "- release-notes: Notes from git log. (release)") || !strings.Contains(d, "- run-tests:") {
		t.Errorf("catalog missing from the description:\n%s", d)
	}
	run := func(name string) (string, bool) {
		args, _ := json.Marshal(map[string]string{"name": name})
		res, err := tool.Run(context.Background(), nil, args)
		if err != nil {
			t.Fatal(err)
		}
		return res.Text, res.IsError
	}
	text, isErr := run("release-notes")
	if isErr || !strings.Contains(text, "1. Run git log.") || !strings.Contains(text, filepath.Join(dir, "release-notes", "template.md")) {
		t.Errorf("read_skill release-notes = %q", text)
	}
	if text, _ := run("$run-tests"); !strings.Contains(text, "FIRST failure") {
		t.Errorf("shipped run-tests (named with its $) = %q", text)
	}
	text, isErr = run("x")
	if !isErr || !strings.HasPrefix(text, `[skill: no skill named "x" — available: background-jobs, commit-message, `) {
		t.Errorf("unknown = %q", text)
	}

	// The editor's card names the skill's file, which it can open; a
	// shipped skill has no file on disk to point at.
	describe := func(name string) (string, []string) {
		args, _ := json.Marshal(map[string]string{"name": name})
		c := tool.Describe(nil, args)
		var paths []string
		for _, l := range c.Locations {
			paths = append(paths, l.Path)
		}
		return c.Title, paths
	}
	if title, paths := describe("release-notes"); title != "read skill release-notes" || len(paths) != 1 || filepath.Base(filepath.Dir(paths[0])) != "release-notes" {
		t.Errorf("describe release-notes = %q %v, want its SKILL.md as the location", title, paths)
	}
	if _, paths := describe("run-tests"); len(paths) != 0 {
		t.Errorf("a shipped skill points the editor at %v", paths)
	}

	// A skill added later is readable although the catalog stays as it was.
	before := tool.Description()
	os.WriteFile(filepath.Join(dir, "late.md"), []byte("---\ndescription: Late.\n---\nlate steps\n"), 0o644)
	if text, isErr := run("late"); isErr || !strings.Contains(text, "late steps") {
		t.Errorf("late skill = %q", text)
	}
	if tool.Description() != before {
		t.Error("the description changed during the session: the prefix would break")
	}
}

// dirSource is a skills folder on disk.
func dirSource(dir string) skills.Source { return skills.Source{FS: os.DirFS(dir), Dir: dir} }
