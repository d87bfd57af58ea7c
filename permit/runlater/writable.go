package runlater

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/sourcegraph/conc"

	"github.com/mm-agent/mm/tools"
)

// Landlock only grants: a rule on a directory covers everything below
// it, and nothing can be carved out again. Granting the workspace as a
// whole would let a confined command write .git/config, .git/hooks,
// .mm/agent.yaml or .envrc — files that make a program run code later
// (RunsLater), which the user is asked about every time. So the
// workspace is granted entry by entry: every top-level directory and file
// except those that run later, and inside .github every entry but
// workflows. The root directory itself gets no write right: a command
// cannot create, remove or rename a file directly in it (that right would
// reach .git below it), so no new file that runs later can appear there
// either. What stays writable inside a granted directory — a submodule's
// .git, a subdirectory's .vscode — Landlock cannot take out; write_file
// still asks for those.

// mixedDirs are top-level directories that hold files that run later
// below a level of ordinary ones: they are granted entry by entry too.
var mixedDirs = map[string]bool{".github": true}

// Writable are the directories and files under root a confined
// command may write (Grants), git asked for its hooks directory while
// the workspace is looked at.
func Writable(root string) (dirs, files []string) {
	var hooks string
	var wg conc.WaitGroup
	wg.Go(func() { hooks = Hooks(root) })
	f := Look(root)
	wg.Wait()
	return f.Grants(hooks)
}

// Grants are the directories and files under the root a confined
// command may write, from what the look found and the hooks directory
// git named ("" when none). Links are left out: Landlock would grant
// what they point to, which may be outside the workspace.
//
// A file or directory that runs later under another name (Targets: what
// .envrc or a hook links to; the hooks directory) is not granted either,
// and a directory that holds one is granted entry by entry down to it.
func (f Found) Grants(hooks string) (dirs, files []string) {
	root, protected, realRoot := f.Root, f.Targets(), tools.Real(f.Root)
	if hooks != "" {
		protected = append(protected, hooks)
	}
	var walk func(rel string)
	walk = func(rel string) {
		entries, err := os.ReadDir(filepath.Join(root, rel))
		if err != nil {
			return
		}
		for _, e := range entries {
			name := filepath.Join(rel, e.Name())
			exact, below := holds(protected, filepath.Join(realRoot, name))
			switch t := e.Type(); {
			case exact:
			case t.IsDir() && below:
				walk(name)
			case t.IsDir() && reason(name, true) != "":
			case t.IsDir() && rel == "" && mixedDirs[strings.ToLower(e.Name())]:
				walk(name)
			case t.IsDir():
				dirs = append(dirs, filepath.Join(root, name))
			case t.IsRegular() && RunsLater(name) == "":
				files = append(files, filepath.Join(root, name))
			}
		}
	}
	walk("")
	return dirs, files
}

// holds says whether p is one of protected, or a directory above one.
func holds(protected []string, p string) (exact, below bool) {
	for _, q := range protected {
		exact = exact || q == p
		below = below || strings.HasPrefix(q, p+string(filepath.Separator))
	}
	return exact, below
}
