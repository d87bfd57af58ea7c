package shell

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/mm-agent/mm/permit/gitconfig"
)

// A repository's own git config and hooks are code git runs: core.fsmonitor
// runs at every `git status`, hooks at commit and checkout, diff drivers at
// `git diff`. A repository can arrive with them in place (an archive with
// its .git, a bare repository committed as files, a shared folder), so a
// command the user was not asked about — allowed by a rule, an "always"
// answer, a hook or yolo — must not run them: what git can be told to
// skip is switched off (GitNeutral), and a git command whose repository
// holds anything else that is not known to run nothing is asked in every
// mode (permit/gitconfig asks git which repository and which settings).

// GitNeutral is added to the environment of a command that runs without a
// question: git then runs no fsmonitor, hook, pager or editor.
var GitNeutral = gitconfig.Neutral

// mentionsGit reports whether a command line may run git. Compiled at
// first use: mm's start pays for no regexp.
var mentionsGit = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^A-Za-z0-9_.-])git([^A-Za-z0-9_.-]|$)`)
})

// gitRisk says why running git in dir would run a program the repository
// configures ("" when it would not, or line runs no git). It is the check
// of last resort, for a line that mentions git where the analysis saw no
// git command of its own (`xargs -I{} git …`); each git command the
// analysis sees is checked in the repository it uses (gitRepo).
func gitRisk(ctx context.Context, dir, line string, environ []string) string {
	if !mentionsGit().MatchString(line) {
		return ""
	}
	why := gitconfig.Risk(ctx, gitconfig.Query{Dir: dir, Environ: environ})
	return strings.ReplaceAll(why, dir+string(filepath.Separator), "")
}

// gitEnv are the variables that choose which repository or config files
// git reads.
var gitEnv = map[string]bool{
	"GIT_DIR": true, "GIT_COMMON_DIR": true, "GIT_WORK_TREE": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true,
	"GIT_CONFIG": true, "GIT_CEILING_DIRECTORIES": true, "GIT_DISCOVERY_ACROSS_FILESYSTEM": true,
}

// gitRepo says why the git command inner (its words after any wrapper),
// run from each directory of pl with the variables vars set for it, would
// run a program a repository configures: git itself is asked which
// repository it would use — from that directory, with the command's -C,
// --git-dir and --work-tree, and the variables the line sets — and that
// repository's settings are judged (gitconfig.Risk). When the repository
// is chosen when the line runs (a computed directory or option), it says
// so: mm cannot read that config first. "" when git would run none.
func (a *analysis) gitRepo(pl place, inner []word, vars map[string]word) string {
	if pl.unknown() {
		return "git runs in a directory a `cd` computes when the line runs: mm cannot read that repository's config first"
	}
	var opts []string
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
		case w.text == "-C" || w.text == "--git-dir" || w.text == "--work-tree":
			v, ok := next()
			if !ok {
				break
			}
			if !v.literal {
				return "git's repository is chosen when the line runs (" + w.text + " " + v.text + "): mm cannot read its config first"
			}
			opts = append(opts, w.text, a.expandHome(v.text))
		case strings.HasPrefix(w.text, "--git-dir=") || strings.HasPrefix(w.text, "--work-tree="):
			if !w.literal {
				return "git's repository is chosen when the line runs (" + w.text + "): mm cannot read its config first"
			}
			name, v, _ := strings.Cut(w.text, "=")
			opts = append(opts, name+"="+a.expandHome(v))
		case w.text == "--bare":
			opts = append(opts, w.text)
		case w.text == "-c" || w.text == "--namespace" || w.text == "--super-prefix" || w.text == "--config-env":
			next()
		case strings.HasPrefix(w.text, "-"):
		default:
			i = len(inner) // the subcommand: git's own options end
		}
	}
	var env []string
	for name, v := range vars {
		if !v.literal {
			return "the line sets " + name + " for git to a value computed when it runs: mm cannot read that repository's config first"
		}
		env = append(env, name+"="+a.expandHome(v.text))
	}
	for _, dir := range pl.dirs() {
		q := gitconfig.Query{Dir: dir, Options: opts, Vars: env, Environ: a.environ}
		if why := gitconfig.Risk(a.ctx, q); why != "" {
			return a.relName(why)
		}
	}
	return ""
}

// relName rewrites the absolute paths of a reason that lie under the
// session's directory as relative ones, as the user reads them.
func (a *analysis) relName(why string) string {
	if a.cwd == "" {
		return why
	}
	return strings.ReplaceAll(why, a.cwd+string(filepath.Separator), "")
}

// expandHome is p with a leading ~ or ~user expanded as bash does it.
func (a *analysis) expandHome(p string) string {
	if home, rest, ok := tildeHome(p, a.home()); ok {
		return home + rest
	}
	return p
}

// home is the home directory commands run with.
func (a *analysis) home() string {
	for _, kv := range a.environ {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			return h
		}
	}
	h, _ := os.UserHomeDir()
	return h
}
