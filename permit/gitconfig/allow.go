package gitconfig

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// Allowed are the settings a repository may hold without a git command
// run there being asked: each runs no program, or names one git is told
// to skip whenever a command runs without a question (Neutral). A key is
// written section.name, or section.*.name for any subsection; value, when
// set, must accept the value too.
//
// The list is what ordinary repositories hold — what `git init`, `git
// clone`, `git submodule init`, `git lfs install`, `git remote add` and
// `git config user.*` write — and settings that only tune output, storage
// or the network protocol. Anything else is asked: a key mm has not
// judged is not taken to be harmless.
var Allowed = []Allow{
	// What git init and git clone write.
	{"core.repositoryformatversion", nil, "the repository's format"},
	{"core.filemode", nil, "whether the executable bit is tracked"},
	{"core.bare", nil, "whether the repository has a work tree"},
	{"core.logallrefupdates", nil, "whether reflogs are kept"},
	{"core.ignorecase", nil, "the file system's case rules"},
	{"core.precomposeunicode", nil, "the file system's Unicode rules"},
	{"core.symlinks", nil, "whether links are checked out as links"},
	{"remote.*.url", plainURL, "where fetch and push go (no transport helper: <helper>::…, ext::)"},
	{"remote.*.pushurl", plainURL, "where push goes (no transport helper)"},
	{"remote.*.fetch", nil, "which refs fetch updates"},
	{"remote.*.push", nil, "which refs push sends"},
	{"remote.*.tagopt", nil, "whether fetch takes tags"},
	{"remote.*.prune", nil, "whether fetch prunes"},
	{"remote.*.mirror", nil, "whether push mirrors"},
	{"remote.*.promisor", nil, "a partial clone's remote"},
	{"remote.*.partialclonefilter", nil, "a partial clone's filter"},
	{"remote.*.skipdefaultupdate", nil, "whether remote update skips it"},
	{"remote.*.skipfetchall", nil, "whether fetch --all skips it"},
	{"branch.*.remote", nil, "a branch's upstream remote"},
	{"branch.*.merge", nil, "a branch's upstream branch"},
	{"branch.*.rebase", nil, "whether pull rebases the branch"},
	{"branch.*.pushremote", nil, "where the branch is pushed"},
	{"branch.*.description", nil, "text"},
	{"init.defaultbranch", nil, "the first branch's name"},
	{"extensions.objectformat", nil, "the hash algorithm"},
	{"extensions.worktreeconfig", nil, "whether worktrees have their own config"},
	{"extensions.partialclone", nil, "a partial clone's remote"},
	{"extensions.refstorage", nil, "how refs are stored"},
	{"extensions.preciousobjects", nil, "whether gc may delete objects"},
	// What people set in a repository: identity, habits, output.
	{"user.name", nil, "identity"},
	{"user.email", nil, "identity"},
	{"user.signingkey", nil, "a key name (the program that signs is gpg.program, not allowed)"},
	{"user.useconfigonly", nil, "identity"},
	{"author.name", nil, "identity"},
	{"author.email", nil, "identity"},
	{"committer.name", nil, "identity"},
	{"committer.email", nil, "identity"},
	{"commit.gpgsign", nil, "whether commits are signed (by gpg.program, the user's own)"},
	{"tag.gpgsign", nil, "whether tags are signed"},
	{"gpg.format", nil, "openpgp, x509 or ssh: picks the user's own gpg, gpgsm or ssh-keygen"},
	{"commit.template", nil, "a message file"},
	{"commit.verbose", nil, "output"},
	{"commit.cleanup", nil, "message clean-up"},
	{"commit.status", nil, "output"},
	{"pull.rebase", nil, "whether pull rebases"},
	{"pull.ff", nil, "whether pull fast-forwards"},
	{"push.default", nil, "what push sends"},
	{"push.autosetupremote", nil, "upstream set-up"},
	{"push.followtags", nil, "what push sends"},
	{"fetch.prune", nil, "whether fetch prunes"},
	{"fetch.prunetags", nil, "whether fetch prunes tags"},
	{"fetch.recursesubmodules", nil, "whether fetch recurses (the submodules' configs are judged too)"},
	{"fetch.parallel", nil, "parallelism"},
	{"fetch.writecommitgraph", nil, "storage"},
	{"merge.ff", nil, "whether merge fast-forwards"},
	{"merge.conflictstyle", nil, "conflict markers"},
	{"merge.renames", nil, "rename detection"},
	{"merge.tool", nil, "picks a merge tool by name for git mergetool (its cmd is not allowed)"},
	{"merge.*.name", nil, "a merge driver's description (its driver is not allowed)"},
	{"diff.tool", nil, "picks a diff tool by name for git difftool (its cmd is not allowed)"},
	{"mergetool.keepbackup", nil, "mergetool's habits"},
	{"mergetool.prompt", nil, "mergetool's habits"},
	{"difftool.prompt", nil, "difftool's habits"},
	{"rebase.autostash", nil, "rebase's habits"},
	{"rebase.autosquash", nil, "rebase's habits"},
	{"rebase.updaterefs", nil, "rebase's habits"},
	{"rebase.missingcommitscheck", nil, "rebase's habits"},
	{"rebase.instructionformat", nil, "output"},
	{"rerere.enabled", nil, "conflict resolution reuse"},
	{"rerere.autoupdate", nil, "conflict resolution reuse"},
	{"diff.renames", nil, "output"},
	{"diff.algorithm", nil, "output"},
	{"diff.colormoved", nil, "output"},
	{"diff.mnemonicprefix", nil, "output"},
	{"diff.noprefix", nil, "output"},
	{"diff.submodule", nil, "output"},
	{"diff.context", nil, "output"},
	{"diff.interhunkcontext", nil, "output"},
	{"diff.relative", nil, "output"},
	{"diff.indentheuristic", nil, "output"},
	{"diff.*.binary", nil, "a diff driver treats files as binary (its textconv and command are not allowed)"},
	{"diff.*.xfuncname", nil, "a diff driver's hunk headers (a regular expression)"},
	{"diff.*.funcname", nil, "a diff driver's hunk headers (a regular expression)"},
	{"diff.*.wordregex", nil, "a diff driver's words (a regular expression)"},
	{"diff.*.cachetextconv", nil, "caching"},
	{"status.showuntrackedfiles", nil, "output"},
	{"status.submodulesummary", nil, "output"},
	{"status.short", nil, "output"},
	{"status.branch", nil, "output"},
	{"log.date", nil, "output"},
	{"log.decorate", nil, "output"},
	{"log.follow", nil, "output"},
	{"log.showsignature", nil, "output"},
	{"format.pretty", nil, "output"},
	{"column.ui", nil, "output"},
	{"color.ui", nil, "output"},
	{"help.autocorrect", nil, "runs a mistyped builtin (aliases are not allowed)"},
	{"advice.*", nil, "hints"},
	{"core.autocrlf", nil, "line endings"},
	{"core.eol", nil, "line endings"},
	{"core.safecrlf", nil, "line endings"},
	{"core.quotepath", nil, "output"},
	{"core.whitespace", nil, "whitespace checks"},
	{"core.abbrev", nil, "output"},
	{"core.commentchar", nil, "message comments"},
	{"core.untrackedcache", nil, "a cache"},
	{"core.splitindex", nil, "storage"},
	{"core.preloadindex", nil, "speed"},
	{"core.compression", nil, "storage"},
	{"core.bigfilethreshold", nil, "storage"},
	{"core.sparsecheckout", nil, "which paths are checked out"},
	{"core.sparsecheckoutcone", nil, "which paths are checked out"},
	{"core.checkstat", nil, "change detection"},
	{"core.trustctime", nil, "change detection"},
	{"core.excludesfile", nil, "a file of ignore patterns"},
	{"core.attributesfile", nil, "a file of attributes (the drivers they pick are judged as settings)"},
	{"core.longpaths", nil, "file names"},
	{"gc.auto", nil, "housekeeping"},
	{"gc.autodetach", nil, "housekeeping"},
	{"gc.reflogexpire", nil, "housekeeping"},
	{"gc.reflogexpireunreachable", nil, "housekeeping"},
	{"gc.pruneexpire", nil, "housekeeping"},
	{"gc.writecommitgraph", nil, "housekeeping"},
	{"pack.threads", nil, "storage"},
	{"index.version", nil, "storage"},
	{"index.skiphash", nil, "storage"},
	{"feature.manyfiles", nil, "storage"},
	{"maintenance.auto", nil, "housekeeping"},
	{"maintenance.strategy", nil, "housekeeping"},
	{"protocol.version", nil, "the wire protocol (protocol.*.allow, which enables transports, is not allowed)"},
	{"transfer.fsckobjects", nil, "checks"},
	{"fetch.fsckobjects", nil, "checks"},
	{"receive.fsckobjects", nil, "checks"},
	{"receive.denycurrentbranch", nil, "what a push into this repository may do"},
	{"receive.denynonfastforwards", nil, "what a push into this repository may do"},
	{"clone.defaultremotename", nil, "a name"},
	{"checkout.defaultremote", nil, "a name"},
	{"worktree.guessremote", nil, "a habit"},
	{"tag.sort", nil, "output"},
	{"blame.ignorerevsfile", nil, "a file of revisions"},
	{"blame.markignoredlines", nil, "output"},
	// What git submodule init copies from .gitmodules.
	{"submodule.*.url", plainURL, "where the submodule comes from (no transport helper)"},
	{"submodule.*.active", nil, "whether the submodule is used"},
	{"submodule.*.branch", nil, "the branch it follows"},
	{"submodule.*.update", updateMode, "checkout, rebase, merge or none (\"!command\" runs a program)"},
	{"submodule.*.fetchrecursesubmodules", nil, "recursion"},
	{"submodule.*.ignore", nil, "output"},
	{"submodule.*.shallow", nil, "clone depth"},
	{"submodule.recurse", nil, "recursion (the submodules' configs are judged too)"},
	{"submodule.active", nil, "which submodules are used"},
	// Credential helpers by name run git-credential-<name>, the user's own
	// installed program; a value starting with "!" or naming a path runs
	// what the repository chose.
	{"credential.helper", helperName, "a credential helper by name (store, cache, osxkeychain, libsecret, manager)"},
	{"credential.*.helper", helperName, "a credential helper by name"},
	{"credential.username", nil, "a name"},
	{"credential.*.username", nil, "a name"},
	{"credential.usehttppath", nil, "how credentials are matched"},
	{"credential.*.usehttppath", nil, "how credentials are matched"},
	// What git lfs install --local writes: git-lfs, the user's own program.
	{"filter.lfs.clean", equals("git-lfs clean -- %f"), "Git LFS (git lfs install)"},
	{"filter.lfs.smudge", equals("git-lfs smudge -- %f"), "Git LFS (git lfs install)"},
	{"filter.lfs.process", equals("git-lfs filter-process"), "Git LFS (git lfs install)"},
	{"filter.lfs.required", nil, "Git LFS (git lfs install)"},
	{"filter.*.required", nil, "whether a filter must succeed (the filter itself is not allowed)"},
	{"lfs.repositoryformatversion", nil, "Git LFS"},
	{"lfs.url", nil, "Git LFS's server"},
	{"lfs.locksverify", nil, "Git LFS"},
	{"lfs.fetchinclude", nil, "Git LFS"},
	{"lfs.fetchexclude", nil, "Git LFS"},
	// An include only reads another file: git reports what it holds,
	// with its own origin, and that is judged.
	{"include.path", nil, "reads another file, whose settings are judged"},
	{"includeif.*.path", nil, "reads another file, whose settings are judged"},
	// Switched off for every command that runs without a question
	// (Neutral): a pager runs only on a terminal and GIT_PAGER=cat wins.
	{"core.fsmonitor", neutralized, "switched off when unasked (core.fsmonitor=false)"},
	{"core.hookspath", neutralized, "switched off when unasked (core.hooksPath=/dev/null); mm asks for writes to that directory"},
	{"core.pager", nil, "switched off when unasked (GIT_PAGER=cat)"},
	{"pager.*", nil, "switched off when unasked (GIT_PAGER=cat)"},
	{"core.editor", nil, "switched off when unasked (GIT_EDITOR=:)"},
	{"sequence.editor", nil, "switched off when unasked (GIT_SEQUENCE_EDITOR=:)"},
}

// neutralized accepts a setting Neutral switches off through
// GIT_CONFIG_COUNT, which git reads from 2.31 on: with an older git the
// repository's fsmonitor and hooks would run, so they are asked about.
func neutralized(string) bool { return configCount() }

// configCount reports whether the git on PATH reads GIT_CONFIG_COUNT.
var configCount = sync.OnceValue(func() bool {
	out, err := exec.Command("git", "version").Output()
	if err != nil {
		return false
	}
	var major, minor int
	fmt.Sscanf(strings.TrimPrefix(strings.TrimSpace(string(out)), "git version "), "%d.%d", &major, &minor)
	return major > 2 || major == 2 && minor >= 31
})

// Allow is one allowed setting.
type Allow struct {
	Key   string
	Value func(string) bool
	Why   string
}

// Judge says why the setting may make git run a program ("" when it is
// allowed).
func Judge(s Setting) string {
	for _, a := range Allowed {
		if !keyMatch(a.Key, s.Key) {
			continue
		}
		if a.Value != nil && !a.Value(s.Value) {
			return "git would run what " + strconv.Quote(s.Value) + " names (or this git cannot be told to skip it)"
		}
		return ""
	}
	return "mm does not know this setting to run nothing, so git may run a program this repository chose"
}

// keyMatch matches key (section[.subsection].name) against pattern, where
// "*" stands for any subsection.
func keyMatch(pattern, key string) bool {
	ps := strings.SplitN(pattern, ".", 3)
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first < 0 {
		return false
	}
	section, name := key[:first], key[last+1:]
	sub, hasSub := "", first != last
	if hasSub {
		sub = key[first+1 : last]
	}
	switch len(ps) {
	case 2:
		if ps[1] == "*" {
			return section == ps[0] && !hasSub
		}
		return !hasSub && section == ps[0] && name == ps[1]
	case 3:
		return hasSub && section == ps[0] && name == ps[2] && (ps[1] == "*" || ps[1] == sub)
	}
	return false
}

// Neutral is added to the environment of a command that runs without a
// question: git then runs no fsmonitor, hook, pager or editor of the
// repository (git 2.31+ reads GIT_CONFIG_COUNT; an older git is asked
// about instead, since its repository's core.fsmonitor and hooks are then
// not switched off).
var Neutral = []string{
	"GIT_CONFIG_COUNT=3",
	"GIT_CONFIG_KEY_0=core.fsmonitor", "GIT_CONFIG_VALUE_0=false",
	"GIT_CONFIG_KEY_1=core.hooksPath", "GIT_CONFIG_VALUE_1=/dev/null",
	"GIT_CONFIG_KEY_2=core.pager", "GIT_CONFIG_VALUE_2=cat",
	"GIT_PAGER=cat", "GIT_EDITOR=:", "GIT_SEQUENCE_EDITOR=:",
}

// plainURL accepts a URL git fetches by itself: not <helper>::<address>
// (a remote helper program picked by the repository) nor ext:: and fd::.
func plainURL(v string) bool {
	return !strings.Contains(v, "::")
}

// updateMode accepts the update modes that run no command.
func updateMode(v string) bool {
	switch v {
	case "checkout", "rebase", "merge", "none":
		return true
	}
	return false
}

// helperName accepts a credential helper named by name (git runs
// git-credential-<name> from its exec path or PATH) or the empty value
// that resets the list; not "!command" nor a path.
func helperName(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return true
	}
	word, _, _ := strings.Cut(v, " ")
	return !strings.HasPrefix(v, "!") && !strings.ContainsAny(word, `/\~$`)
}

// equals accepts exactly want.
func equals(want string) func(string) bool {
	return func(v string) bool { return v == want }
}
