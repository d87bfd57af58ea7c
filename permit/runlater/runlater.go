package runlater

import (
	"context"
	"path"
	"path/filepath"
	"strings"

	"github.com/mm-agent/mm/permit/gitconfig"
	"github.com/mm-agent/mm/tools"
)

// RunsLater says why writing the workspace-relative path rel makes mm or
// another program run code later — git running a hook or a configured
// program, an editor running a task, direnv sourcing a file, CI running a
// workflow, another agent starting its MCP servers, Python running a
// start-up file, mm obeying its own configuration — or "" when it does
// not. Such a write is asked every time, in every mode (Policy): the
// model, or text it read, must not be able to plant code that runs after
// the question that covered it.
//
// Build and test files (Makefile, package.json scripts, go generate
// lines, conftest.py) are not listed: they run only when the user, or an
// approved command, asks for a build or a test, and listing them would
// make every project file a question.
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
	for suffix, why := range runLaterSuffixes {
		if strings.HasSuffix(base, suffix) {
			return why
		}
	}
	if len(parts) == 3 && parts[1] == "workflows" && ciWorkflowDirs[parts[0]] {
		return "a CI workflow (" + parts[0] + "/workflows): it runs commands, with the repository's secrets, once pushed"
	}
	if len(parts) >= 3 && parts[0] == ".github" && parts[1] == "actions" {
		return "a GitHub Action of the repository: a workflow runs it, with the repository's secrets"
	}
	if len(parts) >= 2 && sitePackages(parts[:len(parts)-1]) && (strings.HasSuffix(base, ".pth") || base == "sitecustomize.py" || base == "usercustomize.py") {
		return "a Python start-up file: the interpreter of that environment runs it at every start (a language server asking it for its paths included)"
	}
	return ""
}

// sitePackages reports whether a directory on the way is a Python
// environment's site-packages.
func sitePackages(dirs []string) bool {
	for _, d := range dirs {
		if d == "site-packages" || d == "dist-packages" {
			return true
		}
	}
	return false
}

// ciWorkflowDirs hold a CI's workflows directly in their workflows/
// directory (GitHub: docs.github.com/actions; Forgejo:
// forgejo.org/docs/latest/user/actions; Gitea: docs.gitea.com/usage/actions).
var ciWorkflowDirs = map[string]bool{".github": true, ".forgejo": true, ".gitea": true}

// runLaterSuffixes are file name endings of files that run later.
var runLaterSuffixes = map[string]string{
	".code-workspace":  "a VS Code workspace file: its settings and tasks run programs",
	".sublime-project": "a Sublime Text project: its build systems and language server settings run programs",
}

// runLaterDirs are directories whose files configure programs that run
// code, at any depth: a submodule has its own .git, and mm or an editor
// may be started in a subdirectory. The lists are by kind, each complete
// for the tools it names as their documentation describes them (the
// sources beside each group).
var runLaterDirs = map[string]string{
	// mm itself.
	".mm": "mm's own configuration: hooks, MCP servers and agents mm starts",
	// Version control (git-scm.com/docs/githooks, git-config; husky;
	// Mercurial hgrc; Jujutsu config).
	".git":   "git's own directory: its config and hooks make git run programs",
	".husky": "git hooks (husky points git at them)",
	".hg":    "Mercurial's own directory: its hgrc hooks run programs",
	".jj":    "Jujutsu's own directory: its config and the git repository under it run programs",
	// Editors: settings, tasks and language servers they start (VS Code
	// tasks; JetBrains run configurations; Zed tasks; Helix languages;
	// containers.dev; Fleet; Nova tasks; Theia; Eclipse builders).
	".vscode":               "editor settings and tasks: VS Code runs the programs they name",
	".idea":                 "JetBrains project settings: run configurations and tools run programs",
	".zed":                  "Zed settings and tasks: they run programs",
	".helix":                "Helix settings: they name the language servers it starts",
	".devcontainer":         "a dev container definition: its commands run when it is opened",
	".fleet":                "Fleet settings and run configurations: they run programs",
	".nova":                 "Nova tasks and settings: they run programs",
	".theia":                "Theia settings and tasks: they run programs",
	".externaltoolbuilders": "Eclipse external tool builders: they run at each build",
	// Other coding agents: their hooks, MCP servers and commands (the
	// settings pages of Claude Code, Cursor, Gemini CLI, Continue, Roo
	// Code, Kiro, Qwen Code, Windsurf, Amazon Q, Codex, opencode, Augment,
	// Junie, Kilo Code, Trae and Cline).
	".claude":     "Claude Code settings: its hooks, MCP servers and allowed commands run programs",
	".cursor":     "Cursor settings: its MCP servers, rules and hooks run programs",
	".gemini":     "Gemini CLI settings: its MCP servers and tool commands run programs",
	".continue":   "Continue settings: its MCP servers and commands run programs",
	".roo":        "Roo Code settings: its MCP servers and commands run programs",
	".kiro":       "Kiro settings: its MCP servers and hooks run programs",
	".qwen":       "Qwen Code settings: its MCP servers and tool commands run programs",
	".windsurf":   "Windsurf settings: its MCP servers and workflows run programs",
	".amazonq":    "Amazon Q settings: its MCP servers run programs",
	".codex":      "Codex settings: its MCP servers and commands run programs",
	".opencode":   "opencode settings: its MCP servers, commands and plugins run programs",
	".augment":    "Augment settings: its MCP servers run programs",
	".junie":      "Junie settings: its MCP servers run programs",
	".kilocode":   "Kilo Code settings: its MCP servers and commands run programs",
	".trae":       "Trae settings: its MCP servers run programs",
	".clinerules": "Cline rules and hooks: its hooks run programs",
	// Build tools' own configuration (cargo config).
	".cargo": "cargo's configuration: it can name a wrapper or runner cargo starts",
	// CI: what runs once pushed, with the repository's secrets (CircleCI,
	// Buildkite, Woodpecker, Azure Pipelines, Semaphore, Tekton).
	".circleci":        "a CI configuration (CircleCI): it runs commands, with the repository's secrets, once pushed",
	".buildkite":       "a CI configuration (Buildkite): its pipelines and hooks run commands once pushed",
	".woodpecker":      "a CI configuration (Woodpecker): it runs commands, with the repository's secrets, once pushed",
	".azure-pipelines": "a CI configuration (Azure Pipelines templates): it runs commands once pushed",
	".semaphore":       "a CI configuration (Semaphore): it runs commands, with the repository's secrets, once pushed",
	".tekton":          "a CI configuration (Tekton): it runs commands once pushed",
}

// runLaterFiles are file names, lower-case, that configure programs that
// run code, wherever they are; by kind, with sources as for runLaterDirs.
var runLaterFiles = map[string]string{
	// Version control (gitattributes, gitmodules; pre-commit; lefthook).
	".gitattributes":          "git attributes pick diff, merge and filter programs git runs",
	".gitmodules":             "submodules: git clones and checks them out, hooks included",
	".pre-commit-config.yaml": "pre-commit runs the commands it lists at each commit",
	"lefthook.yml":            "lefthook runs the commands it lists as git hooks",
	".lefthook.yml":           "lefthook runs the commands it lists as git hooks",
	// Editors (Vim and Neovim 'exrc'; Emacs directory variables;
	// containers.dev; Kate projects; Gitpod; devfile.io).
	".exrc":              "Vim and Neovim run it when started here (exrc)",
	".vimrc":             "Vim runs it when started here (exrc)",
	".gvimrc":            "gVim runs it when started here (exrc)",
	".nvim.lua":          "Neovim runs it when started here (exrc)",
	".nvimrc":            "Neovim runs it when started here (exrc)",
	".dir-locals.el":     "Emacs evaluates it when you open a file here",
	".dir-locals-2.el":   "Emacs evaluates it when you open a file here",
	".devcontainer.json": "a dev container definition: its commands run when it is opened",
	".kateproject":       "a Kate project: its build targets and language server settings run programs",
	".gitpod.yml":        "Gitpod runs its tasks when a workspace opens",
	"devfile.yaml":       "a devfile: its commands run when a cloud workspace opens",
	// Shells' and package managers' own configuration (direnv; mise;
	// npmrc; yarnrc; pnpmfile).
	".envrc":        "direnv sources it as a shell script when you enter the directory",
	"mise.toml":     "mise runs its hooks and tasks when you enter the directory",
	".mise.toml":    "mise runs its hooks and tasks when you enter the directory",
	".npmrc":        "npm's configuration: it can name the shell and node options npm runs",
	".yarnrc":       "yarn's configuration: it can name the program yarn runs",
	".yarnrc.yml":   "yarn's configuration: yarnPath names the program yarn runs",
	".pnpmfile.cjs": "pnpm runs it at every install",
	// Other coding agents (as for runLaterDirs; aider; Crush).
	".mcp.json":       "MCP servers that agents (Claude Code, others) start in this project",
	"opencode.json":   "opencode's configuration: its MCP servers, commands and plugins run programs",
	"opencode.jsonc":  "opencode's configuration: its MCP servers, commands and plugins run programs",
	".roomodes":       "Roo Code's modes: they choose what its commands may run",
	".aider.conf.yml": "aider's configuration: its lint and test commands run programs",
	"crush.json":      "Crush's configuration: its MCP and language servers run programs",
	".crush.json":     "Crush's configuration: its MCP and language servers run programs",
	// CI (GitLab, Travis CI, Jenkins, Bitbucket Pipelines, Drone,
	// Woodpecker, Azure Pipelines, AppVeyor, Cirrus CI, Codemagic, Bitrise,
	// AWS CodeBuild, Google Cloud Build).
	".gitlab-ci.yml":          "a CI configuration (GitLab): it runs commands, with the repository's secrets, once pushed",
	".travis.yml":             "a CI configuration (Travis CI): it runs commands, with the repository's secrets, once pushed",
	"jenkinsfile":             "a CI pipeline (Jenkins): it runs commands, with the repository's secrets, once pushed",
	"bitbucket-pipelines.yml": "a CI configuration (Bitbucket): it runs commands, with the repository's secrets, once pushed",
	".drone.yml":              "a CI configuration (Drone): it runs commands, with the repository's secrets, once pushed",
	".drone.star":             "a CI configuration (Drone): it runs commands, with the repository's secrets, once pushed",
	".woodpecker.yml":         "a CI configuration (Woodpecker): it runs commands, with the repository's secrets, once pushed",
	".woodpecker.yaml":        "a CI configuration (Woodpecker): it runs commands, with the repository's secrets, once pushed",
	"azure-pipelines.yml":     "a CI configuration (Azure Pipelines): it runs commands, with the repository's secrets, once pushed",
	"azure-pipelines.yaml":    "a CI configuration (Azure Pipelines): it runs commands, with the repository's secrets, once pushed",
	"appveyor.yml":            "a CI configuration (AppVeyor): it runs commands, with the repository's secrets, once pushed",
	".appveyor.yml":           "a CI configuration (AppVeyor): it runs commands, with the repository's secrets, once pushed",
	".cirrus.yml":             "a CI configuration (Cirrus CI): it runs commands, with the repository's secrets, once pushed",
	".cirrus.star":            "a CI configuration (Cirrus CI): it runs commands, with the repository's secrets, once pushed",
	"codemagic.yaml":          "a CI configuration (Codemagic): it runs commands, with the repository's secrets, once pushed",
	"bitrise.yml":             "a CI configuration (Bitrise): it runs commands, with the repository's secrets, once pushed",
	"buildspec.yml":           "a CI configuration (AWS CodeBuild): it runs commands, with the project's credentials, once pushed",
	"cloudbuild.yaml":         "a CI configuration (Google Cloud Build): it runs commands, with the project's credentials, once pushed",
	"cloudbuild.yml":          "a CI configuration (Google Cloud Build): it runs commands, with the project's credentials, once pushed",
}

// RunLater finds the files of a workspace that run later (RunsLater), and
// the ones its configuration names (hook scripts, MCP and language server
// programs, agent files), for the Policy.
type RunLater struct {
	// Root is the workspace root the paths are relative to.
	Root string
	// Named maps more absolute paths to why they run later: a file, or a
	// directory whose every file does (a package a hook loads).
	Named map[string]string
	// Control are mm's own directories and files — the user's config
	// directory, the state directory (trust records, remembered answers,
	// sessions, logs) — whatever they hold now: any write below them
	// runs later, from wherever it comes.
	Control []string
}

// Why says why writing the absolute path abs, as it is written, runs code
// later, "" when it does not. A link on the way is not followed: Lands
// says where the write goes.
func (r *RunLater) Why(abs string) string {
	if r == nil {
		return ""
	}
	abs = filepath.Clean(abs)
	if why := r.control(abs); why != "" {
		return why
	}
	if why, ok := r.Named[abs]; ok {
		return why
	}
	// A named file reached under another name — through a link to it or
	// to its directory — is the same file; a file below a named
	// directory runs later with it.
	if len(r.Named) > 0 {
		real := tools.Real(abs)
		for p, why := range r.Named {
			if rp := tools.Real(p); rp == real || under(real, rp) {
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

// control says why abs is one of mm's own files (Control), "" when not.
func (r *RunLater) control(abs string) string {
	real := tools.Real(abs)
	for _, c := range r.Control {
		if c == "" {
			continue
		}
		rc := tools.Real(c)
		if abs == c || real == rc || under(abs, c) || under(real, rc) {
			return "it is mm's own configuration or state (" + c + "): mm obeys it, and only you may change it"
		}
	}
	return ""
}

// under reports whether p lies below dir.
func under(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// hooksDir is the directory git takes the hooks of the repository at root
// from — core.hooksPath when the repository sets it, as git itself reads
// it — "" when root is in no repository: scripts/hooks is then as much
// git's hooks as .git/hooks is.
func hooksDir(root string) string {
	return gitconfig.HooksDir(context.Background(), root, nil)
}

// linkedFrom says why writing real writes a file that runs later under
// another name: a link with such a name points at real, or at a
// directory above it. A repository can arrive with one (.envrc ->
// notes.txt, .vscode -> config/editor), and people link git hooks to
// scripts they track (.git/hooks/pre-commit -> ../../scripts/check.sh):
// writing the target is writing the hook.
func (r *RunLater) linkedFrom(real string) string {
	for _, l := range Look(r.Root).Links {
		if real == l.Real || under(real, l.Real) {
			return filepath.ToSlash(l.Rel) + " is a link to it: " + l.Why
		}
	}
	return ""
}

// Hooks is the directory git takes the hooks of the repository at root
// from, links resolved, as git says; "" outside a repository.
func Hooks(root string) string {
	if hooks := hooksDir(root); hooks != "" {
		return tools.Real(hooks)
	}
	return ""
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
