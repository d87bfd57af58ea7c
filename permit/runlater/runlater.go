package runlater

import (
	"cmp"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mm-agent/mm/tools"
)

// RunsLater says why writing the workspace-relative path rel makes mm or
// another program run code later — git running a hook or a configured
// program, an editor running a task, direnv sourcing a file, mm obeying its
// own configuration — or "" when it does not. Such a write is asked every
// time, in every mode (Policy): the model, or text it read, must not be able
// to plant code that runs after the question that covered it.
//
// Build files (Makefile, package.json scripts, go generate lines) are not
// listed: they run only when the user, or an approved command, asks for a
// build, and listing them would make every project file a question.
func RunsLater(rel string) string {
	p := strings.ToLower(path.Clean(filepath.ToSlash(rel)))
	if p == "." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
		return ""
	}
	parts := strings.Split(p, "/")
	base := parts[len(parts)-1]
	for _, dir := range parts[:len(parts)-1] {
		if why, ok := runLaterDirs[dir]; ok {
			return why
		}
	}
	if base == ".git" {
		return "a .git file points git at another repository, whose config and hooks git obeys"
	}
	if why, ok := runLaterFiles[base]; ok {
		return why
	}
	if strings.HasSuffix(base, ".code-workspace") {
		return "a VS Code workspace file: its settings and tasks run programs"
	}
	if len(parts) == 3 && parts[0] == ".github" && parts[1] == "workflows" {
		return "a CI workflow: it runs commands, with the repository's secrets, once pushed"
	}
	if len(parts) >= 3 && parts[0] == ".github" && parts[1] == "actions" {
		return "a GitHub Action of the repository: a workflow runs it, with the repository's secrets"
	}
	return ""
}

// runLaterDirs are directories whose files configure programs that run
// code, at any depth: a submodule has its own .git, and mm or an editor
// may be started in a subdirectory.
var runLaterDirs = map[string]string{
	".git":          "git's own directory: its config and hooks make git run programs",
	".mm":           "mm's own configuration: hooks, MCP servers and agents mm starts",
	".vscode":       "editor settings and tasks: VS Code runs the programs they name",
	".idea":         "JetBrains project settings: run configurations and tools run programs",
	".zed":          "Zed settings and tasks: they run programs",
	".helix":        "Helix settings: they name the language servers it starts",
	".devcontainer": "a dev container definition: its commands run when it is opened",
	".husky":        "git hooks (husky points git at them)",
	".cargo":        "cargo's configuration: it can name a wrapper or runner cargo starts",
	".claude":       "Claude Code settings: its hooks, MCP servers and allowed commands run programs",
	".cursor":       "Cursor settings: its MCP servers, rules and hooks run programs",
	".gemini":       "Gemini CLI settings: its MCP servers and tool commands run programs",
	".continue":     "Continue settings: its MCP servers and commands run programs",
	".hg":           "Mercurial's own directory: its hgrc hooks run programs",
	".jj":           "Jujutsu's own directory: its config and the git repository under it run programs",
	".circleci":     "a CI configuration: it runs commands, with the repository's secrets, once pushed",
}

// runLaterFiles are file names that configure programs that run code,
// wherever they are.
var runLaterFiles = map[string]string{
	".gitattributes":          "git attributes pick diff, merge and filter programs git runs",
	".gitmodules":             "submodules: git clones and checks them out, hooks included",
	".envrc":                  "direnv sources it as a shell script when you enter the directory",
	".exrc":                   "Vim and Neovim run it when started here (exrc)",
	".nvim.lua":               "Neovim runs it when started here (exrc)",
	".nvimrc":                 "Neovim runs it when started here (exrc)",
	".dir-locals.el":          "Emacs evaluates it when you open a file here",
	".pre-commit-config.yaml": "pre-commit runs the commands it lists at each commit",
	"lefthook.yml":            "lefthook runs the commands it lists as git hooks",
	".lefthook.yml":           "lefthook runs the commands it lists as git hooks",
	".npmrc":                  "npm's configuration: it can name the shell and node options npm runs",
	".yarnrc":                 "yarn's configuration: it can name the program yarn runs",
	".yarnrc.yml":             "yarn's configuration: yarnPath names the program yarn runs",
	".pnpmfile.cjs":           "pnpm runs it at every install",
	"mise.toml":               "mise runs its hooks and tasks when you enter the directory",
	".mise.toml":              "mise runs its hooks and tasks when you enter the directory",
	".mcp.json":               "MCP servers that agents (Claude Code, others) start in this project",
	".gitlab-ci.yml":          "a CI configuration: it runs commands, with the repository's secrets, once pushed",
}

// RunLater finds the files of a workspace that run later (RunsLater), and
// the ones its configuration names (hook scripts, MCP and language server
// programs, agent files), for the Policy.
type RunLater struct {
	// Root is the workspace root the paths are relative to.
	Root string
	// Named maps more absolute paths to why they run later.
	Named map[string]string
}

// Why says why writing the absolute path abs, as it is written, runs code
// later, "" when it does not. A link on the way is not followed: Lands
// says where the write goes.
func (r *RunLater) Why(abs string) string {
	if r == nil {
		return ""
	}
	abs = filepath.Clean(abs)
	if why, ok := r.Named[abs]; ok {
		return why
	}
	// A named file reached under another name — through a link to it or
	// to its directory — is the same file.
	if len(r.Named) > 0 {
		real := tools.Real(abs)
		for p, why := range r.Named {
			if tools.Real(p) == real {
				return why
			}
		}
	}
	// A path outside the root is still asked about what the root's
	// links and git config make of it: in a session of several roots, a
	// link in one may lead to a file of another.
	if rel, ok := r.rel(abs); ok {
		if why := RunsLater(rel); why != "" {
			return why
		}
	}
	if hooks := hooksDir(r.Root); hooks != "" {
		if real := tools.Real(abs); strings.HasPrefix(real, tools.Real(hooks)+string(filepath.Separator)) {
			return "the repository's config points git's hooks here (core.hooksPath): git runs them"
		}
	}
	return r.linkedFrom(tools.Real(abs))
}

// hooksDir is the directory the repository at root tells git to take its
// hooks from (core.hooksPath in .git/config), "" when it names none:
// scripts/hooks is then as much git's hooks as .git/hooks is.
func hooksDir(root string) string {
	config := filepath.Join(root, ".git", "config")
	if data, err := os.ReadFile(filepath.Join(root, ".git")); err == nil {
		// A worktree or submodule: .git names the repository's directory.
		gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
		if !ok {
			return ""
		}
		if !filepath.IsAbs(gitdir) {
			gitdir = filepath.Join(root, gitdir)
		}
		if common, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
			c := strings.TrimSpace(string(common))
			if !filepath.IsAbs(c) {
				c = filepath.Join(gitdir, c)
			}
			gitdir = c
		}
		config = filepath.Join(gitdir, "config")
	}
	data, err := os.ReadFile(config)
	if err != nil || len(data) > 1<<20 {
		return ""
	}
	section, dir := "", ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section != "core" || !strings.EqualFold(strings.TrimSpace(key), "hookspath") {
			continue
		}
		dir = strings.Trim(strings.TrimSpace(value), `"`)
	}
	switch {
	case dir == "":
		return ""
	case strings.HasPrefix(dir, "~/"):
		return "" // outside the workspace: not a file mm writes
	case !filepath.IsAbs(dir):
		dir = filepath.Join(root, dir)
	}
	return filepath.Clean(dir)
}

// maxLinkScan bounds the entries linkedFrom looks at: a write costs one
// bounded walk, not one of a whole monorepo.
const maxLinkScan = 20000

// linkedFrom says why writing real writes a file that runs later under
// another name: a link with such a name points at real, or at a
// directory above it. A repository can arrive with one (.envrc ->
// notes.txt, .vscode -> config/editor), and people link git hooks to
// scripts they track (.git/hooks/pre-commit -> ../../scripts/check.sh):
// writing the target is writing the hook.
func (r *RunLater) linkedFrom(real string) string {
	for _, l := range runLaterLinks(r.Root, real) {
		if real == l.target || strings.HasPrefix(real, l.target+string(filepath.Separator)) {
			return l.name + " is a link to it: " + l.why
		}
	}
	return ""
}

// runLaterLink is a link named like a file or directory that runs later,
// and where it leads.
type runLaterLink struct {
	name, target, why string
}

// runLaterLinks finds, in a bounded walk of root, the links named like a
// file or directory that runs later; stop, when not "", ends the walk at
// the first whose target is stop or above it.
func runLaterLinks(root, stop string) []runLaterLink {
	root = tools.Real(root)
	var out []runLaterLink
	n := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if n++; n > maxLinkScan {
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if skipLinkScan(filepath.ToSlash(rel), d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		// A link named like a file that runs later, or like such a
		// directory (.vscode -> config/editor).
		why := cmp.Or(RunsLater(rel), RunsLater(filepath.Join(rel, "file")))
		if why == "" {
			return nil
		}
		l := runLaterLink{name: filepath.ToSlash(rel), target: tools.Real(p), why: why}
		out = append(out, l)
		if stop != "" && (stop == l.target || strings.HasPrefix(stop, l.target+string(filepath.Separator))) {
			return filepath.SkipAll
		}
		return nil
	})
	return out
}

// Protected lists the files and directories of the workspace at root
// that run later under another name — what a link named like a file that
// runs later leads to, and the directory core.hooksPath names — for a
// sandbox that must not grant them, though their names are ordinary.
func Protected(root string) []string {
	var out []string
	for _, l := range runLaterLinks(root, "") {
		out = append(out, l.target)
	}
	if hooks := hooksDir(root); hooks != "" {
		out = append(out, tools.Real(hooks))
	}
	return out
}

// skipLinkScan names the directories linkedFrom does not enter: git's
// object store and logs (large, and never links), and dependencies.
func skipLinkScan(rel, name string) bool {
	switch name {
	case "node_modules", "__pycache__":
		return true
	}
	switch {
	case strings.HasSuffix(rel, ".git/objects"), strings.HasSuffix(rel, ".git/logs"), strings.HasSuffix(rel, ".git/lfs"):
		return true
	}
	return false
}

// rel gives abs relative to the root: as the root is written, or as it
// is once its own links are resolved (what Real returns is under that).
func (r *RunLater) rel(abs string) (string, bool) {
	for _, root := range []string{r.Root, tools.Real(r.Root)} {
		if rel, err := filepath.Rel(root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel, true
		}
	}
	return "", false
}

// name is abs as the user reads it: relative to the root when inside it.
func (r *RunLater) Name(abs string) string {
	if rel, ok := r.rel(abs); ok {
		return filepath.ToSlash(rel)
	}
	return abs
}

// Redirect says why a write to abs, which lands at real (Real, or what a
// writer found at the moment of writing), must not happen: a link on the
// way leads it to a file that runs later. "" when abs is where the write
// lands, or where it lands does not run later.
//
// Such a write is refused rather than asked: a file tool's question
// names the path it was given, and the write would land elsewhere; the
// model is told to write the file itself, which is then asked.
func (r *RunLater) Redirect(abs, real string) string {
	if r == nil || filepath.Clean(abs) == filepath.Clean(real) {
		return ""
	}
	why := r.Why(real)
	if why == "" {
		return ""
	}
	to := r.Name(real)
	return r.Name(abs) + " leads, through a link, to " + to + ", which runs later — " + why +
		": mm does not write such a file through a link; write " + to + " itself, so the user is asked"
}
