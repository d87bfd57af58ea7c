// Package gitconfig asks git itself which repository a git command will
// use and what that repository's configuration says, and judges the
// configuration by an allowlist of settings known to run nothing.
//
// A repository's own configuration is code git runs: a diff driver at
// `git diff`, a credential helper starting with "!", a gpg program at
// `git commit`. A repository can arrive with it in place (an archive with
// its .git, a bare repository committed as ordinary files, a vendored
// one), so mm reads it before a git command runs — through git, never a
// parser of its own: `git rev-parse` finds the repository exactly as the
// command will (walking up, a bare repository, -C, --git-dir, GIT_DIR),
// and `git config --list -z --show-origin --show-scope --includes` gives
// every setting with where it comes from, includes followed. Only the
// repository's own settings (scope local and worktree, and its
// submodules') are judged: the user's global and system configuration is
// the user's.
//
// Invariants:
//   - A setting is allowed only when its key, and for some keys its value,
//     is on the allowlist below; any other key of the repository makes the
//     command runs-later (asked in every mode). A key git cannot be told to
//     skip is never allowed because it is common.
//   - The questions put to git run in a neutral environment: no pager, no
//     prompt, no optional lock, and only git's plumbing (rev-parse, config),
//     which runs no hook, filter, fsmonitor or alias.
package gitconfig

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Query is how a git command will be run: from which directory, with
// which of git's location options and variables.
type Query struct {
	// Dir is the directory git starts in, absolute.
	Dir string
	// Options are git's own options before the subcommand that choose the
	// repository, as written: -C DIR, --git-dir=DIR, --work-tree=DIR,
	// --bare. Others (-c, -p…) are left out.
	Options []string
	// Vars are the variables the command line sets for git, NAME=value:
	// GIT_DIR, GIT_COMMON_DIR, GIT_WORK_TREE, GIT_CONFIG_GLOBAL…
	Vars []string
	// Environ is the environment the command starts from (nil: mm's own).
	Environ []string
}

// timeout bounds one question to git: a repository on a hung network
// file system must not hold the turn.
const timeout = 10 * time.Second

// maxModules bounds how many submodule repositories are read.
const maxModules = 64

// Setting is one line of a repository's configuration, as git reports it.
type Setting struct {
	Scope  string // local, worktree, global, system, command
	Origin string // the file it comes from, absolute when git gave a path
	Key    string // section[.subsection].name; section and name lower-case
	Value  string
	// Bool: the key was written without "=" (a boolean true).
	Bool bool
}

// Risk says why git run as q would obey a setting of its repository that
// is not known to run nothing — "<file> sets <key>: …", the file absolute
// — or "" when every
// setting of the repository is on the allowlist, or there is no
// repository. A failure to ask git is a reason too: mm cannot tell.
func Risk(ctx context.Context, q Query) string {
	settings, err := Read(ctx, q)
	if err != nil {
		return "mm could not read the configuration of git's repository here (" + err.Error() + ")"
	}
	judged := map[string]bool{"local": true, "worktree": true}
	for _, v := range q.Vars {
		// A configuration file the line itself chooses is as much the
		// work's as the repository's own.
		switch name, _, _ := strings.Cut(v, "="); name {
		case "GIT_CONFIG_GLOBAL":
			judged["global"] = true
		case "GIT_CONFIG_SYSTEM":
			judged["system"] = true
		}
	}
	for _, s := range settings {
		if !judged[s.Scope] {
			continue
		}
		if why := Judge(s); why != "" {
			return s.Origin + " sets " + s.Key + ": " + why
		}
	}
	return ""
}

// Read is every setting git would read for q, its submodules' included
// (their settings have the scope "local"); nil when q is in no
// repository.
func Read(ctx context.Context, q Query) ([]Setting, error) {
	out, err := run(ctx, q, "rev-parse", "--absolute-git-dir", "--git-common-dir")
	if err != nil {
		if errors.Is(err, errNoRepository) {
			return nil, nil
		}
		return nil, err
	}
	dirs := strings.Split(strings.TrimSpace(out), "\n")
	if len(dirs) != 2 {
		return nil, errors.New("git rev-parse answered " + out)
	}
	gitDir, common := dirs[0], dirs[1]
	if !filepath.IsAbs(common) {
		common = filepath.Join(queryDir(q), common)
	}
	list, err := run(ctx, q, "config", "--list", "-z", "--show-origin", "--show-scope", "--includes")
	if err != nil {
		return nil, err
	}
	settings := parse(list, queryDir(q))
	// git reads a submodule's own configuration when a command recurses
	// into it (diff --submodule=diff, submodule foreach, checkout
	// --recurse-submodules): those repositories are the work's too.
	for _, f := range modules(common, gitDir) {
		list, err := run(ctx, Query{Dir: filepath.Dir(f), Environ: q.Environ}, "config", "--list", "-z", "--show-origin", "--includes", "--file", f)
		if err != nil {
			continue // git does not read a broken one either
		}
		for _, s := range parse(list, filepath.Dir(f)) {
			s.Scope = "local"
			settings = append(settings, s)
		}
	}
	return settings, nil
}

// HooksDir is the directory git takes the hooks of the repository at dir
// from (core.hooksPath, or the hooks directory of its git directory),
// absolute; "" when dir is in no repository or git cannot tell.
func HooksDir(ctx context.Context, dir string, environ []string) string {
	q := Query{Dir: dir, Environ: environ}
	out, err := run(ctx, q, "rev-parse", "--git-path", "hooks")
	if err != nil {
		return ""
	}
	p := strings.TrimSpace(out)
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// queryDir is the directory git ends up in after q's -C options.
func queryDir(q Query) string {
	dir := q.Dir
	for i := 0; i < len(q.Options); i++ {
		if q.Options[i] == "-C" && i+1 < len(q.Options) {
			i++
			if c := q.Options[i]; filepath.IsAbs(c) {
				dir = c
			} else if c != "" {
				dir = filepath.Join(dir, c)
			}
		}
	}
	return dir
}

// modules are the configuration files of the submodule repositories kept
// in the common git directory (modules/…/config), and of the git
// directory's own when it differs.
func modules(dirs ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		filepath.WalkDir(filepath.Join(d, "modules"), func(p string, e os.DirEntry, err error) error {
			switch {
			case err != nil:
				return nil
			case len(out) >= maxModules:
				return filepath.SkipAll
			case e.IsDir() && (e.Name() == "objects" || e.Name() == "refs" || e.Name() == "logs"):
				return filepath.SkipDir
			case !e.IsDir() && e.Name() == "config" && !seen[p]:
				seen[p] = true
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// errNoRepository is git saying the directory is in no repository.
var errNoRepository = errors.New("not a git repository")

// run runs git with q's location and args in the neutral environment and
// returns what it printed.
func run(ctx context.Context, q Query, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := append(append([]string(nil), q.Options...), args...)
	cmd := exec.CommandContext(ctx, "git", argv...)
	cmd.Dir = q.Dir
	cmd.Env = neutral(q.Environ, q.Vars)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg := strings.TrimSpace(stderr.String())
			if strings.Contains(msg, "not a git repository") || strings.Contains(msg, "dubious ownership") {
				// git refuses to run there: so will the command.
				return "", errNoRepository
			}
			if i := strings.IndexByte(msg, '\n'); i > 0 {
				msg = msg[:i]
			}
			return "", errors.New(msg)
		}
		if errors.Is(err, exec.ErrNotFound) {
			return "", errNoRepository // no git: no git command runs either
		}
		return "", err
	}
	return stdout.String(), nil
}

// neutral is the environment of a question to git: environ (mm's own when
// nil) and the line's variables, with nothing that could make git wait
// for a human or start a pager. Settings given in the environment
// (GIT_CONFIG_COUNT…, which mm itself adds to commands that run unasked)
// are left out: the question is what the repository says.
func neutral(environ, vars []string) []string {
	if environ == nil {
		environ = os.Environ()
	}
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if name == "GIT_CONFIG_COUNT" || name == "GIT_CONFIG_PARAMETERS" || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, vars...)
	return append(env, "GIT_PAGER=cat", "PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_ASKPASS=", "SSH_ASKPASS=")
}

// parse reads `git config --list -z --show-origin --show-scope` output:
// scope NUL origin NUL key [LF value] NUL…; without --show-scope, origin
// NUL key… (the scope is then "command"). Relative origins are taken
// from dir.
func parse(out, dir string) []Setting {
	fields := strings.Split(out, "\x00")
	var ss []Setting
	withScope := len(fields) > 0 && isScope(fields[0])
	for i := 0; i < len(fields); {
		var s Setting
		if withScope {
			if i+2 >= len(fields) {
				break
			}
			s.Scope, i = fields[i], i+1
		} else {
			if i+1 >= len(fields) {
				break
			}
			s.Scope = "command"
		}
		origin := fields[i]
		kv := fields[i+1]
		i += 2
		if p, ok := strings.CutPrefix(origin, "file:"); ok {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			origin = p
		}
		s.Origin = origin
		key, value, hasValue := strings.Cut(kv, "\n")
		s.Key, s.Value, s.Bool = normalKey(key), value, !hasValue
		ss = append(ss, s)
	}
	return ss
}

func isScope(s string) bool {
	switch s {
	case "system", "global", "local", "worktree", "command", "unknown":
		return true
	}
	return false
}

// normalKey lower-cases a key's section and name and keeps its
// subsection as written (git compares subsections case-sensitively).
func normalKey(key string) string {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	if first == last {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}
