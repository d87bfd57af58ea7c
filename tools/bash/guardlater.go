package bash

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mm-agent/mm/tools"
)

// Landlock confines a command to the workspace, but grants it as a whole:
// it cannot carve .git/hooks or .envrc out of the tree, and git needs
// .git. So a sandboxed command's writes to the workspace's files that run
// later (tools.RunsLater) are put back after it ends — changed files
// restored, new ones removed — and the model is told to ask for them with
// write_file, which asks the user. Only the places such files live are
// looked at (the root's entries, .git's config and hooks, .mm, the editor
// directories), never the whole tree.

// laterFile is one file that runs later, as it was.
type laterFile struct {
	data []byte
	mode fs.FileMode
}

// laterSnapshot maps the absolute paths of a workspace's files that run
// later to their contents.
type laterSnapshot map[string]laterFile

// laterDirs are the directories whose files are watched, recursively.
var laterDirs = []string{".mm", ".vscode", ".idea", ".zed", ".helix", ".devcontainer", ".husky", ".cargo", ".github/workflows",
	".git/hooks", ".git/info"}

// maxLaterFiles bounds a snapshot: a workspace with more such files than
// this is not watched beyond it.
const maxLaterFiles = 2000

func snapshotLater(root string) laterSnapshot {
	s := laterSnapshot{}
	add := func(p string) {
		if len(s) >= maxLaterFiles {
			return
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
			return
		}
		if b, err := os.ReadFile(p); err == nil {
			s[p] = laterFile{data: b, mode: fi.Mode().Perm()}
		}
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if !e.IsDir() && tools.RunsLater(e.Name()) != "" {
			add(filepath.Join(root, e.Name()))
		}
	}
	for _, f := range []string{".git/config", ".git/config.worktree"} {
		add(filepath.Join(root, f))
	}
	for _, d := range laterDirs {
		filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				add(p)
			}
			return nil
		})
	}
	return s
}

// putBack restores before over what the command left, and names, relative
// to root, the files it had written.
func putBack(root string, before laterSnapshot) []string {
	after := snapshotLater(root)
	var changed []string
	for p, was := range before {
		now, ok := after[p]
		if ok && bytes.Equal(now.data, was.data) && now.mode == was.mode {
			continue
		}
		os.WriteFile(p, was.data, was.mode)
		os.Chmod(p, was.mode)
		changed = append(changed, p)
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			os.Remove(p)
			changed = append(changed, p)
		}
	}
	sort.Strings(changed)
	for i, p := range changed {
		if rel, err := filepath.Rel(root, p); err == nil {
			changed[i] = filepath.ToSlash(rel)
		}
	}
	return changed
}

// putBackNote tells the model what the sandbox put back.
func putBackNote(files []string) string {
	if len(files) == 0 {
		return ""
	}
	return "[mm: the sandbox put back " + strings.Join(files, ", ") + " — files that make a program run code later may not be written by a command; write one with write_file, which asks the user]\n"
}
