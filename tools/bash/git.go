package bash

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

// gitNeutral is added to the environment of a command that runs without a
// question: git then runs no fsmonitor, no hook, no pager (git 2.31+
// reads GIT_CONFIG_COUNT; older gits ignore it, and the repository's
// programs are then asked about by gitRisk's rule).
var gitNeutral = []string{
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
// program and that gitNeutral cannot switch off: a command that runs git
// in such a repository is asked, in every mode.
var riskyGitKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(diff\.external|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)|merge\..+\.driver|` +
		`core\.(sshcommand|editor|askpass|gitproxy|fsmonitor|hookspath)|sequence\.editor|credential\.(.+\.)?helper|gpg\.(.+\.)?program|` +
		`include\.path|includeif\..+\.path|uploadpack\.packobjectshook|remote\..+\.(uploadpack|receivepack)|protocol\.(.+\.)?allow|` +
		`submodule\..+\.update|alias\..+|url\..+\.insteadof)$`)
})

// gitRisk says why running git in dir would run a program the repository
// configures ("" when it would not, or line runs no git): the first risky
// key of its local config files.
func gitRisk(dir, line string) string {
	if !mentionsGit().MatchString(line) {
		return ""
	}
	for _, f := range gitConfigFiles(dir) {
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

// gitConfigFiles are the local config files of the repository dir is in.
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
			files := []string{filepath.Join(gitdir, "config"), filepath.Join(gitdir, "config.worktree")}
			if b, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
				common := strings.TrimSpace(string(b))
				if !filepath.IsAbs(common) {
					common = filepath.Join(gitdir, common)
				}
				files = append(files, filepath.Join(common, "config"))
			}
			return files
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
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
			continue // switched off by gitNeutral
		}
		if riskyGitKey().MatchString(key) {
			return key
		}
	}
	return ""
}
