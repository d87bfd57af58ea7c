package tools

import (
	"path"
	"path/filepath"
	"strings"
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

// Why says why writing the absolute path abs runs code later, "" when it
// does not.
func (r *RunLater) Why(abs string) string {
	if r == nil {
		return ""
	}
	if why, ok := r.Named[filepath.Clean(abs)]; ok {
		return why
	}
	rel, err := filepath.Rel(r.Root, abs)
	if err != nil {
		return ""
	}
	return RunsLater(rel)
}

// runsLater says why the approval writes a file that runs later, naming
// the file: the tool's own reason (bash) or the first path it writes that
// is one. A tool that can only say it may write anything (an MCP tool) is
// not asked for that alone: yolo would then mean nothing for it.
func (p *Policy) runsLater(a Approval) string {
	if a.RunsLater != "" {
		return a.RunsLater
	}
	p.mu.Lock()
	r := p.runLater
	p.mu.Unlock()
	if a.Caps&(WritesWorkspace|WritesOutside|WritesRunLater) == 0 {
		return ""
	}
	if r == nil {
		return ""
	}
	var paths []string
	for _, d := range a.Diffs {
		paths = append(paths, d.Path)
	}
	for _, l := range a.Locations {
		paths = append(paths, l.Path)
	}
	for _, abs := range paths {
		if why := r.Why(abs); why != "" {
			rel, err := filepath.Rel(r.Root, abs)
			if err != nil || strings.HasPrefix(rel, "..") {
				rel = abs
			}
			return filepath.ToSlash(rel) + " runs later — " + why
		}
	}
	return ""
}

// WatchRunLater makes every write to a file that runs later (r.Why) ask
// the user, in every mode, yolo included.
func (p *Policy) WatchRunLater(r *RunLater) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runLater = r
}
