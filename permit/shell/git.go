package shell

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// A repository's own git config and hooks are code git runs: core.fsmonitor
// runs at every `git status`, hooks at commit and checkout, diff drivers at
// `git diff`. A repository can arrive with them in place (an archive with
// its .git, a shared folder), so a command the user was not asked about —
// allowed by a rule, an "always" answer, a hook or yolo — must not run them.

// GitNeutral is added to the environment of a command that runs without a
// question: git then runs no fsmonitor, no hook, no pager (git 2.31+
// reads GIT_CONFIG_COUNT; older gits ignore it, and the repository's
// programs are then asked about by gitRisk's rule).
var GitNeutral = []string{
	"GIT_CONFIG_COUNT=3",
	"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false",
	"GIT_CONFIG_KEY_1=core.hooksPath", "GIT_CONFIG_VALUE_1=/dev/null",
	"GIT_CONFIG_KEY_2=core.pager", "GIT_CONFIG_VALUE_2=cat",
	"GIT_PAGER=cat",
}

// mentionsGit reports whether a command line may run git. Compiled at
// first use, as riskyGitKey: mm's start pays for no regexp.
var mentionsGit = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_.-])git([^A-Za-z0-9_.-]|$)`)
})

// riskyGitKey matches the config keys, lower-cased, that make git run a
// program and that GitNeutral cannot switch off: a command that runs git
// in such a repository is asked, in every mode.
var riskyGitKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(diff\.external|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)|merge\..+\.driver|` +
		`core\.(sshcommand|editor|askpass|gitproxy|fsmonitor|hookspath)|sequence\.editor|credential\.(.+\.)?helper|gpg\.(.+\.)?program|` +
		`include\.path|includeif\..+\.path|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack)|protocol\.(.+\.)?allow|` +
		`submodule\..+\.update|alias\..+|url\..+\.insteadof)$`)
})

// gitRisk says why running git in dir would run a program the repository
// configures ("" when it would not, or line runs no git): the first risky
// key of its local config files. It is the check of last resort, for a
// line that mentions git where the analysis saw no git command of its own
// (`xargs -I{} git …`); each git command the analysis sees is checked in
// the repository it uses (gitRepo).
func gitRisk(dir, line string) string {
	if !mentionsGit().MatchString(line) {
		return ""
	}
	return configRisk(dir, gitConfigFiles(dir))
}

// configRisk says which of files sets a risky key, naming it relative to
// dir.
func configRisk(dir string, files []string) string {
	for _, f := range files {
		if key := riskyKey(f); key != "" {
			rel, err := filepath.Rel(dir, f)
			if err != nil || strings.HasPrefix(rel, "..") {
				rel = f
			}
			return filepath.ToSlash(rel) + " sets " + key + ": git would run a program this repository chose"
		}
	}
	return ""
}

// gitConfigFiles are the local config files of the repository dir is in:
// git looks for .git from dir up, as it does.
func gitConfigFiles(dir string) []string {
	for d := dir; ; d = filepath.Dir(d) {
		dot := filepath.Join(d, ".git")
		if fi, err := os.Stat(dot); err == nil {
			gitdir := dot
			if !fi.IsDir() {
				b, _ := os.ReadFile(dot)
				p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return nil
				}
				gitdir = strings.TrimSpace(p)
				if !filepath.IsAbs(gitdir) {
					gitdir = filepath.Join(d, gitdir)
				}
			}
			return gitDirFiles(gitdir, "")
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// maxModules bounds how many submodule configs are read.
const maxModules = 64

// gitDirFiles are the config files of the git directory gitdir: its own,
// its worktree's, its common directory's (common, or the one its
// commondir file names), and its submodules' (modules/…/config), which
// git reads when a command recurses into them (diff --submodule=diff,
// submodule foreach).
func gitDirFiles(gitdir, common string) []string {
	files := []string{filepath.Join(gitdir, "config"), filepath.Join(gitdir, "config.worktree")}
	if common == "" {
		if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
			common = strings.TrimSpace(string(b))
		}
	}
	if common != "" {
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		files = append(files, filepath.Join(common, "config"))
	} else {
		common = gitdir
	}
	n := 0
	filepath.WalkDir(filepath.Join(common, "modules"), func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case n >= maxModules:
			return filepath.SkipAll
		case !d.IsDir() && d.Name() == "config":
			files = append(files, p)
			n++
		case d.IsDir() && (d.Name() == "objects" || d.Name() == "refs" || d.Name() == "logs"):
			return filepath.SkipDir
		}
		return nil
	})
	return files
}

// gitEnv are the variables that choose which repository or config files
// git reads.
var gitEnv = map[string]bool{
	"GIT_DIR": true, "GIT_COMMON_DIR": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true,
	"GIT_CONFIG": true, "GIT_CEILING_DIRECTORIES": true, "GIT_DISCOVERY_ACROSS_FILESYSTEM": true,
}

// gitRepo says why the git command inner (its words after any wrapper),
// run from each directory of pl with the variables vars set for it, would
// run a program a repository configures: the repository it uses is found
// as git finds it — after -C, --git-dir, GIT_DIR, GIT_COMMON_DIR, and the
// config files GIT_CONFIG_GLOBAL and GIT_CONFIG_SYSTEM name — and its
// config read. When the repository is chosen when the line runs (a
// computed directory or option), it says so: mm cannot read that config
// first. "" when git would run none.
func gitRepo(cwd string, pl place, inner []word, vars map[string]word) string {
	if pl.unknown() {
		return "git runs in a directory a `cd` computes when the line runs: mm cannot read that repository's config first"
	}
	var chdir []string
	var gitDir *word
	for i := 1; i < len(inner); i++ {
		w := inner[i]
		next := func() (word, bool) {
			if i+1 < len(inner) {
				i++
				return inner[i], true
			}
			return word{}, false
		}
		switch {
		case w.text == "-C":
			if v, ok := next(); ok {
				if !v.literal {
					return "git's directory is computed when the line runs (-C " + v.text + "): mm cannot read that repository's config first"
				}
				chdir = append(chdir, v.text)
			}
		case w.text == "--git-dir":
			if v, ok := next(); ok {
				gitDir = &v
			}
		case strings.HasPrefix(w.text, "--git-dir="):
			v := word{text: strings.TrimPrefix(w.text, "--git-dir="), literal: w.literal}
			gitDir = &v
		case w.text == "-c" || w.text == "--work-tree" || w.text == "--namespace" || w.text == "--super-prefix" || w.text == "--config-env":
			next()
		case strings.HasPrefix(w.text, "-"):
		default:
			i = len(inner) // the subcommand: git's own options end
		}
	}
	if gitDir == nil {
		if v, ok := vars["GIT_DIR"]; ok {
			gitDir = &v
		}
	}
	for name, v := range vars {
		if !v.literal {
			return "the line sets " + name + " for git to a value computed when it runs: mm cannot read that repository's config first"
		}
	}
	if gitDir != nil && !gitDir.literal {
		return "git's repository is computed when the line runs (--git-dir " + gitDir.text + "): mm cannot read its config first"
	}
	for _, dir := range pl.dirs() {
		base := dir
		for _, c := range chdir {
			base = join(base, c)
		}
		var files []string
		if gitDir != nil {
			common := ""
			if v, ok := vars["GIT_COMMON_DIR"]; ok {
				common = join(base, v.text)
			}
			files = gitDirFiles(join(base, gitDir.text), common)
		} else {
			files = gitConfigFiles(base)
		}
		for _, name := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG"} {
			if v, ok := vars[name]; ok && v.text != "" && v.text != "/dev/null" {
				files = append(files, join(base, v.text))
			}
		}
		if why := configRisk(cwd, files); why != "" {
			return why
		}
	}
	return ""
}

// join is p taken from dir: p itself when absolute, ~ expanded.
func join(dir, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// riskyKey returns the first risky key set in a git config file, as
// section.subsection.name.
func riskyKey(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			head := line[1:end]
			name, sub, quoted := strings.Cut(head, " ")
			section = strings.ToLower(strings.TrimSpace(name))
			if quoted {
				section += "." + strings.Trim(strings.TrimSpace(sub), `"`)
			}
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		name, _, _ := strings.Cut(line, "=")
		key := strings.ToLower(section + "." + strings.TrimSpace(name))
		if key == "core.fsmonitor" || key == "core.hookspath" {
			continue // switched off by GitNeutral
		}
		if riskyGitKey().MatchString(key) {
			return key
		}
	}
	return ""
}
