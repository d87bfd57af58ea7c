package shell

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// This file says what an answer, an allow rule and a deny rule cover in a
// command line. The line is parsed (mvdan.cc/sh) and every simple command
// in it — after ;, &&, ||, |, &, a newline, inside $(…), `…`, <(…),
// subshells, functions, loops, and inside the script of sh -c, bash -c and
// eval, behind env, command, xargs, sudo, nice, timeout… — is one part
// that an answer or a rule must cover on its own. What an "always" answer
// remembers for a part is its key:
//
//   - a program on the plain list, with no option from its table of
//     options that run a program or write a file: the program as written,
//     git's subcommand, and its set of options ("git log --oneline").
//     Its other arguments may change, but never to a path outside the
//     workspace;
//   - any other program (interpreters, build tools, package managers,
//     anything unknown), and a plain one with such an option or a
//     redirection into a file: its exact words ("= python3 x.py");
//   - nothing at all (asked every time) when the command sets variables,
//     runs behind a wrapper, has a computed word ($x, $(…), a glob with
//     braces), or names a path outside the workspace.
//
// Allow rules match a part's words as written; a part with a redirection
// into a file, a computed word or an outside path is never covered by
// one. Deny rules match every form of every part (as written, without
// its wrappers, with the program's bare name); a part whose program is
// computed is refused by any deny rule, since none can be checked.

// part is one simple command of a line, judged.
type part struct {
	tools.Part
	text string // the command's words and redirections, for the question
	why  string // why no answer covers it, when Key is ""
	caps tools.Caps
	// glob: a word of it is a glob bash expands when it runs; outside: it
	// names a path outside the workspace.
	glob, outside bool
}

// analysis is what a line does, part by part.
type analysis struct {
	parts []part
	lines int
	// writes are the absolute paths the line may write, as far as its
	// words say: redirection targets, the arguments of programs that
	// write files or of programs mm does not know — resolved against
	// every directory the command may run in (a cd before it). They go to
	// the approval's locations, so that the Policy asks for a write to a
	// file that runs later (runlater.RunsLater) whatever the mode, rule or answer.
	writes []string
	// unplaced are the relative paths the line may write in a directory
	// computed when it runs (`cd "$X"`): any of them may be a file that
	// runs later, so the line is asked in every mode.
	unplaced []string
	// gitLater says why a git command of the line would run a program its
	// repository configures, or why mm cannot tell (gitRepo): asked in
	// every mode.
	gitLater string
	// gitEnv says the line sets GIT_DIR or another variable that picks
	// the repository git reads, for the commands after it.
	gitEnv bool
	// control says why the line runs mm's own trust command, which only
	// the user may run.
	control string
	// creates says an earlier command of the line may create or rename
	// files: a glob after it matches what the line made, not what mm
	// saw (createdGlobs).
	creates bool
	// redefines says an earlier command defines what a later name runs
	// (alias, hash, enable, shopt).
	redefines bool
	// budget is how many more simple commands the analysis follows; past
	// it the rest of the line is one part no answer covers (tooBig).
	budget int

	// What the questions to git need (gitRepo); check is false for a
	// title alone, which asks git nothing.
	ctx     context.Context
	environ []string
	cwd     string
	check   bool
}

// maxParts bounds the simple commands a line is judged by: a line of a
// thousand nested $(…) is asked as a whole, quickly, instead of growing a
// question of megabytes.
const maxParts = 200

// Approval is what the bash tool asks for running line in env: every
// simple command of it judged (a part each), the files it may write, and
// why it runs code later when it does — a git command whose repository
// configures a program included. input is the call's arguments, for the
// clients that show them.
// environ is the environment the commands start from (HOME, PATH; nil:
// mm's own), which the questions to git use too.
func Approval(ctx context.Context, env tools.Env, line string, input any, environ []string) tools.Approval {
	a := analysis{ctx: ctx, environ: environ, check: true}
	a.run(env, line)
	ap := a.approval(line, input)
	if ap.RunsLater == "" && env != nil {
		ap.RunsLater = gitRisk(ctx, env.Cwd(), line, environ)
	}
	return ap
}

// Title is the question's one line for line (analysis.title).
func Title(env tools.Env, line string) string {
	return analyse(env, line).title(line)
}

// analyse judges every simple command of line, with paths resolved
// against env's workspace, asking git nothing.
func analyse(env tools.Env, line string) analysis {
	var a analysis
	a.run(env, line)
	return a
}

// run judges every simple command of line.
func (a *analysis) run(env tools.Env, line string) {
	a.lines = strings.Count(strings.TrimSpace(line), "\n") + 1
	a.budget = maxParts
	if a.ctx == nil {
		a.ctx = context.Background()
	}
	var start place
	if env != nil {
		a.cwd = env.Cwd()
		start = place{{dir: a.cwd}}
	}
	a.walk(env, line, start, 0)
	if a.budget <= 0 {
		text := strings.TrimSpace(line)
		a.parts = append(a.parts, part{Part: tools.Part{Deny: []string{text}, Unknown: true}, text: text,
			why: fmt.Sprintf("the line holds more than %d commands: mm does not judge them one by one", maxParts), caps: tools.Anything})
	}
	a.createdGlobs()
}

// setsAny reports whether an assignment or declaration sets one of names.
func setsAny(c syntax.Command, names map[string]bool) bool {
	switch c := c.(type) {
	case *syntax.CallExpr:
		for _, as := range c.Assigns {
			if names[as.Name.Value] {
				return true
			}
		}
	case *syntax.DeclClause:
		for _, as := range c.Args {
			if as.Name != nil && names[as.Name.Value] {
				return true
			}
		}
	}
	return false
}

// approval is the Approval of the whole line.
func (a analysis) approval(line string, input any) tools.Approval {
	var caps tools.Caps
	parts := make([]tools.Part, 0, len(a.parts))
	for _, pt := range a.parts {
		caps |= pt.caps
		parts = append(parts, pt.Part)
	}
	if len(parts) == 0 { // nothing runs (a comment): still the whole line
		parts = append(parts, tools.Part{Rule: strings.TrimSpace(line), Deny: []string{strings.TrimSpace(line)}})
	}
	var locs []tools.Location
	for _, w := range a.writes {
		locs = append(locs, tools.Location{Path: w})
	}
	ap := tools.Approval{
		Tool:      "bash",
		Kind:      tools.KindExecute,
		Caps:      caps,
		Title:     a.title(line),
		Detail:    a.detail(line),
		Subject:   strings.TrimSpace(line),
		Parts:     parts,
		Locations: locs,
		Input:     input,
	}
	switch {
	case a.control != "":
		ap.RunsLater = a.control
	case len(a.unplaced) > 0:
		ap.RunsLater = "it writes " + strings.Join(a.unplaced, ", ") + " in a directory a `cd` computes when it runs, so it may be a file that runs later"
	case a.gitLater != "":
		ap.RunsLater = a.gitLater
	}
	return ap
}

// written records that the line may write path (relative to each
// directory of pl), under its own name and, through a symlink, under the
// name of what it points to.
func (a *analysis) written(env tools.Env, pl place, path string) {
	if env == nil || path == "" || path == "/dev/null" {
		return
	}
	path = a.expandHome(path)
	if filepath.IsAbs(path) {
		a.writtenAt(filepath.Clean(path))
		return
	}
	if pl.unknown() && !slices.Contains(a.unplaced, path) {
		a.unplaced = append(a.unplaced, path)
	}
	for _, dir := range pl.dirs() {
		a.writtenAt(filepath.Join(dir, path))
	}
}

// writtenAt records the absolute path.
func (a *analysis) writtenAt(path string) {
	add := func(p string) {
		for _, w := range a.writes {
			if w == p {
				return
			}
		}
		a.writes = append(a.writes, p)
	}
	add(path)
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		add(filepath.Join(dir, filepath.Base(path)))
	}
	add(tools.Real(path)) // a dangling link too: the write creates its target
}

func (a *analysis) walk(env tools.Env, src string, start place, depth int) {
	if a.budget <= 0 {
		return
	}
	f, err := parse(src)
	if err != nil {
		a.add(part{Part: tools.Part{Deny: []string{strings.TrimSpace(src)}, Unknown: true},
			text: strings.TrimSpace(src), why: "it does not parse", caps: tools.Anything})
		return
	}
	at := places(src, f, start)
	if setsGitEnv(f) {
		a.gitEnv = true
	}
	piped := map[*syntax.Stmt]bool{} // statements that read a pipe
	syntax.Walk(f, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
			syntax.Walk(b.Y, func(m syntax.Node) bool {
				if st, ok := m.(*syntax.Stmt); ok {
					piped[st] = true
				}
				return true
			})
		}
		if a.budget <= 0 {
			return false
		}
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		text := strings.TrimSpace(source(src, st))
		call, isCall := st.Cmd.(*syntax.CallExpr)
		pl, ok := at[st]
		if !ok {
			pl = start
		}
		if !isCall || len(call.Args) == 0 {
			// `{ …; } > f`, `FOO=1 > f`: the redirection writes f all the same.
			for _, r := range st.Redirs {
				if rd := redirOf(src, r); rd.writesFile() && r.Word != nil {
					a.written(env, pl, rd.target)
				}
			}
		}
		switch {
		case isCall && len(call.Args) > 0:
			a.call(env, pl, src, st, call, piped[st], depth)
		case isCall, isDecl(st.Cmd):
			// NAME=value, export, declare, local…: the variables of every
			// later command (PATH, CDPATH, GIT_DIR, BASH_ENV) change.
			if setsAny(st.Cmd, changesWhatRuns) {
				a.redefines = true // a later name may run another program
			}
			a.add(part{Part: tools.Part{Deny: []string{text}}, text: text,
				why: "it sets variables for the commands after it", caps: tools.RunsPrograms})
		default:
			if writes := writingRedirs(src, st.Redirs); len(writes) > 0 {
				a.add(part{Part: tools.Part{Deny: []string{text}}, text: text,
					why: "it writes " + strings.Join(writes, ", "), caps: tools.WritesWorkspace})
			}
		}
		return true
	})
}

func isDecl(c syntax.Command) bool {
	switch c.(type) {
	case *syntax.DeclClause, *syntax.LetClause:
		return true
	}
	return false
}

// word is one word of a command: its text and whether it is plain text.
type word struct {
	text    string
	literal bool
}

func (a *analysis) call(env tools.Env, pl place, src string, st *syntax.Stmt, call *syntax.CallExpr, piped bool, depth int) {
	var shown []word // the words as written
	for _, w := range call.Args {
		text, lit := literal(src, w)
		if !lit {
			text = wordText(src, w)
		}
		shown = append(shown, word{text, lit})
	}
	// The words it runs with: braces expanded, env -S split.
	ws, braces, readable := runWords(src, call)
	if len(ws) == 0 {
		ws, readable = shown, false
	}
	p := part{caps: tools.RunsPrograms}
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.text
	}
	written := wordsText(shown)
	from, to := int(st.Pos().Offset()), int(call.End().Offset())
	for _, r := range st.Redirs {
		to = max(to, int(r.End().Offset()))
	}
	if from >= 0 && to <= len(src) && from <= to {
		p.text = strings.TrimSpace(src[from:to])
	}
	inner := unwrap(ws)
	if len(inner) == 0 { // a wrapper alone (env, xargs): it is the program
		inner = ws[:1]
	}
	p.Deny = denyForms(written, inner)
	if run := wordsText(ws); run != written {
		p.Deny = append(p.Deny, denyForms(run, inner)...)
	}
	prog := baseName(inner[0].text)
	switch {
	case !inner[0].literal || strings.Contains(inner[0].text, "{}"):
		p.Unknown = true // computed, or filled in by xargs -I{} / find -exec {}
	case !readable || (braces && len(shown) > 0 && hasBraces(shown[0].text)):
		p.Unknown = true // a program formed by an expansion mm could not follow
	case defines(prog, texts) || a.redefines:
		p.Unknown = true // alias, hash, enable: a later name runs something else
	}
	for _, as := range call.Assigns {
		if changesWhatRuns[as.Name.Value] {
			p.Unknown = true
		}
	}
	if defines(prog, texts) {
		a.redefines = true
	}
	if writers[prog] {
		p.caps |= tools.WritesWorkspace
	}
	if slices.Contains(texts, "trust") && (!inner[0].literal || isSelf(inner[0].text, firstDir(pl))) {
		a.control = "it runs `mm trust`, which records that you trust this workspace's configuration: only you may run it"
	}
	a.gitCheck(env, pl, src, call, ws, inner)
	// The scripts of sh -c, bash -c, eval and find -exec are commands of
	// the line too.
	defer a.nested(env, pl, src, st, texts, inner, depth)
	why := ""
	note := func(w string) {
		if why == "" {
			why = w
		}
	}
	rulable := true
	for _, as := range call.Assigns {
		// A rule names a command, not the environment that changes what
		// it does (LD_PRELOAD=…, GIT_CONFIG_COUNT=…).
		note("it sets " + as.Name.Value + " for the command")
		rulable = false
	}
	if pl.unknown() {
		note("it runs in a directory a `cd` computes when the line runs")
		rulable = false
	}
	if len(inner) < len(ws) && len(call.Assigns) == 0 {
		note("it runs " + wordsText(inner) + " through " + ws[0].text)
		if baseName(ws[0].text) == "xargs" {
			rulable = false // its arguments come from its input
		}
	}
	for _, w := range shown {
		if !w.literal || hasBraces(w.text) {
			note("`" + w.text + "` is computed when it runs")
			rulable = false
			break
		}
	}
	if p.Unknown && why == "" {
		note("what it runs is decided when the line runs")
		rulable = false
	}
	for _, w := range ws[1:] {
		if out := a.outsideAt(env, pl, w.text); out != "" {
			note("it names " + out + ", outside the workspace")
			rulable = false
			p.outside = true
			break
		}
		if isGlob(w.text) {
			p.glob = true
		}
		if why := globAt(env, pl, w.text); why != "" {
			note(why)
			rulable = false
			break
		}
	}
	var writes []string
	for _, r := range st.Redirs {
		rd := redirOf(src, r)
		if r.Word != nil {
			if _, lit := literal(src, r.Word); !lit {
				note("its redirection `" + rd.op + rd.target + "` is computed when it runs")
				rulable = false
				if rd.writesFile() {
					p.caps |= tools.WritesOutside // it may be anywhere
				}
				continue
			}
		}
		if out := a.outsideAt(env, pl, rd.target); out != "" && r.Word != nil && rd.target != "/dev/null" && !isDigits(rd.target) && rd.target != "-" {
			note("it redirects to " + out + ", outside the workspace")
			rulable = false
			p.outside = true
			if rd.writesFile() {
				// Outside the workspace still counts: mm's own
				// configuration and state lie there.
				a.written(env, pl, rd.target)
				p.caps |= tools.WritesOutside
			}
			continue
		}
		if rd.writesFile() {
			a.written(env, pl, rd.target)
			writes = append(writes, rd.op+" "+rd.target)
			p.caps |= tools.WritesWorkspace
			rulable = false // an allow rule names a command, not the files it writes
		}
	}
	switch name := baseName(ws[0].text); {
	case (name == "cd" || name == "pushd") && (len(ws) != 2 || ws[1].text == "-" || strings.HasPrefix(ws[1].text, "-")):
		note("`" + name + "` without a directory of the workspace goes elsewhere ($HOME, $OLDPWD)")
		rulable = false
	case name == "popd" && len(ws) > 1:
		note("`popd` with arguments")
		rulable = false
	}
	_, plain := plainPrograms[baseName(ws[0].text)]
	a.mayWrite(env, pl, inner, &p)
	if piped && !plain {
		note("it reads its input from the pipe: what it runs may change each time")
	}
	if p.caps&(tools.WritesWorkspace|tools.WritesOutside) != 0 || !plain {
		a.creates = true
	}
	if why == "" && len(call.Assigns) == 0 && len(inner) == len(ws) && readOnly(inner) && len(writes) == 0 && p.caps&^tools.RunsPrograms == 0 {
		p.caps = tools.Reads // proven to read the workspace only: plan mode runs it
	}
	if rulable {
		p.Rule = written
	}
	if why != "" {
		p.why = why
		a.add(p)
		return
	}
	p.Key = answerKey(texts, writes)
	if strings.HasPrefix(p.Key, "= ") {
		// What an interpreter reads (a here-document, a file) is part of
		// exactly what was allowed.
		for _, r := range st.Redirs {
			rd := redirOf(src, r)
			if r.Hdoc != nil {
				p.Key += " " + rd.op + rd.target + "\n" + source(src, r.Hdoc)
			} else if !rd.writesFile() && !strings.HasSuffix(rd.op, "&") {
				p.Key += " " + rd.op + " " + rd.target
			}
		}
	}
	a.add(p)
}

// add appends a part while the budget lasts; the first part past it
// stands for the rest of the line (tooBig).
func (a *analysis) add(p part) {
	if a.budget <= 0 {
		return
	}
	a.budget--
	a.parts = append(a.parts, p)
}

// firstDir is a directory the command runs in, "" when none is known.
func firstDir(pl place) string {
	if ds := pl.dirs(); len(ds) > 0 {
		return ds[0]
	}
	return ""
}

// createdGlobs takes back what an answer or a rule covers of a command
// with a glob when another command of the line may create files: bash
// expands the glob when the command runs, after the files of the line
// exist (`touch -- -o.envrc && sort *` sorts into .envrc), so what mm saw
// before is not what runs.
func (a *analysis) createdGlobs() {
	if !a.creates {
		return
	}
	for i := range a.parts {
		if p := &a.parts[i]; p.glob && (p.Key != "" || p.Rule != "") {
			p.Key, p.Rule = "", ""
			p.why = "its glob is expanded when it runs, after another command of the line may have created files"
		}
	}
}

// gitCheck checks the repository a git command uses (gitRepo); a command
// given GIT_DIR or the like that is not git may run git with it, which
// mm cannot follow.
func (a *analysis) gitCheck(env tools.Env, pl place, src string, call *syntax.CallExpr, ws, inner []word) {
	if env == nil || a.gitLater != "" || !a.check {
		return
	}
	vars := map[string]word{}
	for _, as := range call.Assigns {
		if gitEnv[as.Name.Value] {
			v := word{literal: true}
			if as.Value != nil {
				v.text, v.literal = literal(src, as.Value)
			}
			vars[as.Name.Value] = v
		}
	}
	for _, w := range ws[:len(ws)-len(inner)] { // env GIT_DIR=… git
		if name, v, ok := strings.Cut(w.text, "="); ok && gitEnv[name] {
			vars[name] = word{v, w.literal}
		}
	}
	isGit := baseName(inner[0].text) == "git"
	switch {
	case a.gitEnv && (isGit || mentionsGit().MatchString(wordsText(inner))):
		a.gitLater = "the line sets a variable that picks git's repository (GIT_DIR…): mm cannot read that repository's config first"
	case isGit:
		a.gitLater = a.gitRepo(pl, inner, vars)
	case len(vars) > 0:
		a.gitLater = "it sets a variable that picks git's repository (GIT_DIR…) for " + inner[0].text + ", which may run git: mm cannot read that repository's config first"
	}
}

// setsGitEnv reports whether the line sets, for the commands after it, a
// variable that picks git's repository: `GIT_DIR=x; git …`, `export
// GIT_DIR=x`. (One set for a single command is read with it: gitCheck.)
func setsGitEnv(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) == 0 {
				for _, as := range n.Assigns {
					found = found || gitEnv[as.Name.Value]
				}
			}
		case *syntax.DeclClause:
			for _, as := range n.Args {
				found = found || as.Name != nil && gitEnv[as.Name.Value]
			}
		}
		return !found
	})
	return found
}

// nested adds the commands a command runs from its arguments, after it:
// the scripts of eval, trap, a shell's -c (whatever options come before
// it), a shell's here-document, find's -exec. A shell that reads its
// script from its input runs what mm cannot see: its part is marked so.
func (a *analysis) nested(env tools.Env, pl place, src string, st *syntax.Stmt, texts []string, inner []word, depth int) {
	name := baseName(inner[0].text)
	args := texts[len(texts)-len(inner)+1:]
	runs := name == "eval" || name == "trap" && len(args) > 0 && !strings.HasPrefix(args[0], "-") || isShell(name) || name == "find" || name == "fd" || name == "fdfind"
	if !runs {
		return
	}
	if depth >= maxDepth {
		a.add(part{Part: tools.Part{Deny: []string{wordsText(inner)}, Unknown: true}, text: wordsText(inner),
			why: "it runs a script nested deeper than mm follows", caps: tools.Anything})
		return
	}
	switch {
	case name == "eval":
		a.walk(env, strings.Join(args, " "), pl, depth+1)
	case name == "trap":
		a.walk(env, args[0], pl, depth+1)
	case isShell(name):
		r := readShell(args)
		switch {
		case r.hasC:
			a.walk(env, r.script, pl, depth+1)
		case r.file == "":
			hdoc := false
			for _, rd := range st.Redirs {
				if rd.Hdoc != nil {
					hdoc = true
					a.walk(env, source(src, rd.Hdoc), pl, depth+1)
				}
			}
			if !hdoc && len(a.parts) > 0 {
				// Its script comes from its input: a pipe or a file.
				last := &a.parts[len(a.parts)-1]
				last.Unknown, last.Key, last.Rule = true, "", ""
				last.why = name + " runs a script it reads from its input, which mm cannot see"
			}
		}
	case name == "find" || name == "fd" || name == "fdfind":
		for _, c := range execOf(inner[1:]) {
			in := unwrap(asWords(c.words))
			if len(in) > 0 && baseName(in[0].text) == "git" && a.gitLater == "" {
				a.gitLater = name + " runs git in the directories it finds: mm cannot read those repositories' config first"
			}
			sub := denyForms(strings.Join(c.words, " "), in)
			unknown := strings.Contains(c.words[0], "{}") || strings.ContainsAny(c.words[0], "$`")
			a.add(part{Part: tools.Part{Deny: sub, Unknown: unknown}, text: strings.Join(c.words, " "),
				why: name + " runs it for every file", caps: tools.RunsPrograms})
			// A shell it runs has a script of its own: its commands are
			// the line's too, run where find is (-exec) or in every
			// directory it finds (-execdir).
			if len(in) > 0 && isShell(baseName(in[0].text)) {
				if r := readShell(wordTexts(in[1:])); r.hasC {
					at := pl
					if c.inFound {
						at = place{{}}
					}
					a.walk(env, r.script, at, depth+1)
				}
			}
		}
	}
}

func wordTexts(ws []word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

// answerKey is what an "always" answer remembers for a command whose words
// are all plain text inside the workspace: its program, git's subcommand
// and its option set when the program is plain and no option of its table
// is used; else its exact words, "= " first.
func answerKey(words, writes []string) string {
	exact := "= " + quoteWords(words)
	if len(writes) > 0 {
		return exact + " " + strings.Join(writes, " ")
	}
	name := baseName(words[0])
	table, plain := plainPrograms[name]
	if !plain {
		return exact
	}
	args := words[1:]
	head := []string{words[0]}
	if name == "git" {
		if len(args) == 0 {
			return words[0]
		}
		if !gitSafe[args[0]] {
			return exact // an option first (-c, -C…), or an alias or a command that runs things
		}
		head, args = append(head, args[0]), args[1:]
	}
	opts := map[string]bool{}
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		if table.runsOrWrites(a) {
			return exact
		}
		name, _, _ := strings.Cut(a, "=")
		opts[name] = true
	}
	keys := make([]string, 0, len(opts))
	for o := range opts {
		keys = append(keys, o)
	}
	sort.Strings(keys)
	return strings.Join(append(head, keys...), " ")
}

// options lists a program's options that run a program or write a file:
// long ones (matched with GNU's abbreviations: --out is --output), short
// letters (matched anywhere in a bundle: -uo is -u -o), and single-dash
// words (find's -exec).
type options struct {
	long  []string
	short string
	words []string
}

func (o options) runsOrWrites(arg string) bool {
	if strings.HasPrefix(arg, "--") {
		name, _, _ := strings.Cut(arg, "=")
		if len(name) < 3 {
			return false
		}
		for _, l := range o.long {
			if strings.HasPrefix(l, name) {
				return true
			}
		}
		return false
	}
	name, _, _ := strings.Cut(arg, "=")
	for _, w := range o.words {
		if name == w {
			return true
		}
	}
	if len(o.words) > 0 && len(arg) > 2 {
		return false // find-style words are whole words, not bundles
	}
	return strings.ContainsAny(arg[1:], o.short)
}

// plainPrograms are the programs whose arguments are data (files,
// patterns, revisions): an answer for one use covers the same program with
// the same options and other such arguments. Each lists the options that
// make it run a program or write a file; a use with one of them is
// covered only by an answer for exactly that command. Every other program is
// keyed by its whole argument list.
var plainPrograms = map[string]options{
	"ls": {}, "cat": {}, "head": {}, "tail": {}, "wc": {}, "cut": {}, "column": {},
	"tr": {}, "nl": {}, "od": {}, "hexdump": {}, "file": {}, "stat": {}, "du": {},
	"df": {}, "tree": {long: []string{"--fromfile"}, short: "o"}, "pwd": {}, "echo": {},
	"printf": {}, "true": {}, "false": {},
	"basename": {}, "dirname": {}, "realpath": {}, "readlink": {}, "which": {},
	"whoami": {}, "id": {}, "uname": {}, "diff": {}, "cmp": {}, "comm": {},
	"paste": {}, "join": {}, "fold": {}, "fmt": {}, "expand": {}, "unexpand": {},
	"rev": {}, "tac": {}, "seq": {}, "sleep": {}, "test": {}, "[": {},
	"md5sum": {}, "sha1sum": {}, "sha256sum": {}, "sha512sum": {}, "b2sum": {},
	"cksum": {}, "base64": {}, "strings": {}, "nproc": {}, "printenv": {},
	"jq": {}, "cd": {}, "pushd": {}, "popd": {},
	"grep": {}, "egrep": {}, "fgrep": {},
	"date":  {long: []string{"--set"}, short: "s"},
	"mkdir": {}, "touch": {}, "rmdir": {}, "cp": {}, "mv": {}, "rm": {}, "ln": {},
	"chmod": {},
	"sort":  {long: []string{"--output", "--compress-program"}, short: "o"},
	"rg":    {long: []string{"--pre", "--search-zip", "--hostname-bin"}, short: "z"},
	"find":  {words: []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}},
	"fd":    {long: []string{"--exec", "--exec-batch"}, short: "xX"},
	"git": {
		long: []string{"--output", "--output-directory", "--open-files-in-pager", "--ext-diff",
			"--textconv", "--upload-pack", "--receive-pack", "--exec", "--exec-path", "--config",
			"--template", "--separate-git-dir", "--work-tree", "--git-dir", "--extcmd", "--tool",
			"--run", "--hook", "--command", "--execute", "--sequence-editor", "--gpg-program",
			"--pager", "--paginate", "--edit", "--interactive"},
		short: "oOcC",
	},
}

// gitSafe are the git subcommands keyed by their options: built in (never
// an alias, which the repository's config could define), and none runs
// what its arguments name. Any other is keyed by its whole argument list —
// apply and am among them: what they do is the patch their argument
// names, so an answer covers that patch only.
var gitSafe = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "branch": true, "tag": true,
	"add": true, "commit": true, "restore": true, "switch": true, "checkout": true,
	"stash": true, "rev-parse": true, "ls-files": true, "blame": true, "grep": true,
	"shortlog": true, "describe": true, "fetch": true, "pull": true, "push": true,
	"merge": true, "reset": true, "rm": true, "mv": true, "init": true, "reflog": true,
	"cat-file": true, "ls-tree": true, "format-patch": true,
	"cherry-pick": true, "revert": true, "remote": true, "clean": true, "rev-list": true,
	"diff-tree": true, "merge-base": true, "show-ref": true, "for-each-ref": true,
	"version": true, "help": true,
}

// unwrap strips the wrappers and variable assignments in front of a
// command (`sudo FOO=1 nice -n 5 rm x` runs rm x); nil when nothing is
// left or a wrapper's arguments are computed.
func unwrap(ws []word) []word {
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.text
	}
	inner := program(texts)
	return ws[len(ws)-len(inner):]
}

func asWords(ss []string) []word {
	ws := make([]word, len(ss))
	for i, s := range ss {
		ws[i] = word{s, true}
	}
	return ws
}

func wordsText(ws []word) string {
	ts := make([]string, len(ws))
	for i, w := range ws {
		ts[i] = w.text
	}
	return strings.Join(ts, " ")
}

// denyForms are the forms of a command deny rules are matched against:
// as written, without its wrappers, and each with the program's bare name
// (`/bin/rm -rf x` is `rm -rf x`).
//
// A program that is not plain may run its arguments as a command
// (`strace -f rm x`, `xargs rm`), so every run of its words from a program
// name on is a form too, with "{}" for the arguments xargs adds.
func denyForms(written string, inner []word) []string {
	forms := []string{written}
	add := func(s string) {
		for _, f := range forms {
			if f == s {
				return
			}
		}
		forms = append(forms, s)
	}
	if len(inner) > 0 {
		add(wordsText(inner))
		bare := append([]word{{baseName(inner[0].text), true}}, inner[1:]...)
		add(wordsText(bare))
		if _, plain := plainPrograms[bare[0].text]; !plain {
			for i := 1; i < len(bare); i++ {
				rest := append([]word{{baseName(bare[i].text), true}}, bare[i+1:]...)
				add(wordsText(rest))
				add(wordsText(rest) + " {}")
			}
		}
	}
	if strings.Contains(written, "xargs ") && len(inner) > 0 {
		add(wordsText(inner) + " {}")
	}
	return forms
}

// mayWrite records the files a command may write, as far as its words
// say: every argument of a program that writes files or that mm does not
// know (and the value of its options: --output=F, of=F); the value of a
// plain program's option that writes (sort -o F); the paths git restores
// and the repository config git config writes.
func (a *analysis) mayWrite(env tools.Env, pl place, inner []word, p *part) {
	prog, args := baseName(inner[0].text), inner[1:]
	table, plain := plainPrograms[prog]
	switch {
	case prog == "git":
		if len(args) == 0 {
			return
		}
		switch args[0].text {
		case "config":
			a.written(env, pl, ".git/config")
		case "checkout", "restore", "mv", "apply", "am", "stash", "reset", "merge", "pull", "cherry-pick", "revert", "clone", "init", "worktree", "submodule":
		default:
			return
		}
		args = args[1:]
	case plain && !writers[prog]:
		for i, w := range args {
			if !strings.HasPrefix(w.text, "-") || !table.runsOrWrites(w.text) {
				continue
			}
			if _, v, ok := strings.Cut(w.text, "="); ok {
				a.written(env, pl, v)
			} else if i+1 < len(args) {
				a.written(env, pl, args[i+1].text)
			}
			p.caps |= tools.WritesWorkspace
		}
		return
	}
	for _, w := range args {
		switch {
		case !strings.HasPrefix(w.text, "-") && !strings.Contains(w.text, "="):
			a.written(env, pl, w.text)
		case strings.Contains(w.text, "="):
			_, v, _ := strings.Cut(w.text, "=")
			a.written(env, pl, v)
		}
	}
	p.caps |= tools.WritesWorkspace
}

// writers are plain programs that change files.
var writers = map[string]bool{
	"mkdir": true, "touch": true, "rmdir": true, "cp": true, "mv": true, "rm": true,
	"ln": true, "chmod": true,
}

// execCmd is a command find or fd runs: its words, and whether it runs in
// each directory found (-execdir, -okdir) rather than find's own.
type execCmd struct {
	words   []string
	inFound bool
}

// execOf returns the commands of find's -exec/-execdir/-ok/-okdir and
// fd's -x/--exec/-X/--exec-batch.
func execOf(args []word) []execCmd {
	var out []execCmd
	for i := 0; i < len(args); i++ {
		switch opt := args[i].text; opt {
		case "-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X", "--exec-batch":
			c := execCmd{inFound: opt == "-execdir" || opt == "-okdir"}
			for i++; i < len(args) && args[i].text != ";" && args[i].text != "+"; i++ {
				c.words = append(c.words, args[i].text)
			}
			if len(c.words) > 0 {
				out = append(out, c)
			}
		}
	}
	return out
}

// outsideAt is outsidePath from each directory of pl.
func (a *analysis) outsideAt(env tools.Env, pl place, arg string) string {
	for _, e := range envsAt(env, pl) {
		if out := outsidePath(e, arg, a.home()); out != "" {
			return out
		}
	}
	return ""
}

// globAt is globHazard from each directory of pl.
func globAt(env tools.Env, pl place, w string) string {
	for _, e := range envsAt(env, pl) {
		if why := globHazard(e, w); why != "" {
			return why
		}
	}
	return ""
}

// envsAt are env as seen from each directory of pl that is known.
func envsAt(env tools.Env, pl place) []tools.Env {
	if env == nil {
		return nil
	}
	var es []tools.Env
	for _, d := range pl.dirs() {
		es = append(es, dirEnv{Env: env, dir: d})
	}
	return es
}

// dirEnv is an Env whose commands run in dir (after a cd).
type dirEnv struct {
	tools.Env
	dir string
}

func (e dirEnv) Cwd() string { return e.dir }

// outsidePath returns the path arg names when it is outside the
// workspace (the argument itself, a value after =, a value glued to a
// short option), "" otherwise.
func outsidePath(env tools.Env, arg, home string) string {
	if env == nil {
		return ""
	}
	cands := []string{arg}
	if strings.HasPrefix(arg, "-") {
		cands = cands[:0]
		if _, v, ok := strings.Cut(arg, "="); ok {
			cands = append(cands, v)
		}
		if !strings.HasPrefix(arg, "--") && len(arg) > 2 && strings.ContainsAny(arg[2:], "/~") {
			cands = append(cands, arg[2:])
		}
	}
	for _, c := range cands {
		if c == "" || c == "/dev/null" {
			continue
		}
		p := c
		if h, rest, ok := tildeHome(c, home); ok {
			p = h + rest // ~user is that user's home, as bash reads it
		}
		if _, err := tools.Resolve(env, p); errors.Is(err, tools.ErrOutside) {
			return c
		}
	}
	return ""
}

// globHazard says why a word that bash expands as a glob cannot be
// covered: a file it matches now is named like an option (a file called
// --compress-program=x.txt turns `sort *.txt` into another command) or
// leads outside the workspace; "" when it is not a glob or is harmless.
func globHazard(env tools.Env, w string) string {
	if env == nil || !strings.ContainsAny(w, "*?[") {
		return ""
	}
	pat := w
	if !filepath.IsAbs(pat) {
		pat = filepath.Join(env.Cwd(), pat)
	}
	matches, _ := filepath.Glob(pat)
	for _, m := range matches {
		if strings.HasPrefix(filepath.Base(m), "-") {
			return "`" + w + "` matches " + filepath.Base(m) + ", which reads as an option"
		}
		if _, err := tools.Resolve(env, m); errors.Is(err, tools.ErrOutside) {
			return "`" + w + "` matches " + m + ", outside the workspace"
		}
	}
	return ""
}

// hasBraces reports whether an unquoted word may be a brace expansion,
// which bash turns into other words (`{a,../b}`).
func hasBraces(w string) bool {
	i := strings.IndexByte(w, '{')
	return i >= 0 && strings.ContainsAny(w[i:], ",.") && strings.Contains(w[i:], "}")
}

// writingRedirs lists the redirections into files, as text.
func writingRedirs(src string, rs []*syntax.Redirect) []string {
	var out []string
	for _, r := range rs {
		if rd := redirOf(src, r); rd.writesFile() {
			out = append(out, rd.op+" "+rd.target)
		}
	}
	return out
}

// quoteWords writes words as bash would read them back.
func quoteWords(ws []string) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") != "" {
			if q, err := syntax.Quote(w, syntax.LangBash); err == nil {
				out[i] = q
			}
		}
	}
	return strings.Join(out, " ")
}

// title is the question's one line: the whole command when it is one
// short line, else an honest summary — its first command and how many
// more commands and lines there are (the question's detail shows all).
func (a analysis) title(line string) string {
	v := permit.Visible(strings.TrimSpace(line))
	if a.lines == 1 && utf8.RuneCountInString(v) <= titleLimit {
		return "Run `" + v + "`"
	}
	first := v
	if len(a.parts) > 0 {
		first = permit.Visible(clip(a.parts[0].text))
	}
	first, _, _ = strings.Cut(first, "\n")
	if r := []rune(first); len(r) > 60 {
		first = string(r[:59]) + "…"
	}
	t := "Run `" + first + "`"
	var more []string
	if n := len(a.parts) - 1; n > 0 {
		more = append(more, plural(n, "more command"))
	}
	if a.lines > 1 {
		more = append(more, plural(a.lines, "line"))
	}
	if len(more) == 0 {
		return t + fmt.Sprintf(" (%d characters in all)", utf8.RuneCountInString(v))
	}
	return t + " and " + strings.Join(more, ", ")
}

// detail is shown with the question: the whole command, escaped, and what
// "always" would remember and what it cannot cover.
func (a analysis) detail(line string) string {
	v := permit.Visible(strings.TrimSpace(line))
	fence := "```"
	for strings.Contains(v, fence) {
		fence += "`"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%ssh\n%s\n%s\n", fence, v, fence)
	var covered, not []string
	for _, pt := range a.parts {
		if pt.Key == "" {
			not = append(not, fmt.Sprintf("- `%s`: %s", permit.Visible(clip(pt.text)), permit.Visible(clip(pt.why))))
		} else {
			covered = append(covered, "- "+clip(keyText(pt.Key)))
		}
	}
	covered, not = listed(covered), listed(not)
	if len(a.parts) > 1 || a.lines > 1 {
		fmt.Fprintf(&b, "%s, %s.\n", plural(len(a.parts), "command"), plural(a.lines, "line"))
	}
	if len(covered) > 0 {
		b.WriteString("\"Always allow\" allows from now on, in this workspace:\n" + strings.Join(covered, "\n") + "\n")
	}
	if len(not) > 0 {
		b.WriteString("No \"always\" covers, so it is asked each time:\n" + strings.Join(not, "\n") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// maxListed bounds the commands the question lists one by one, and
// maxClip the characters shown of each: the whole line is shown once, at
// the top.
const (
	maxListed = 40
	maxClip   = 160
)

// clip keeps the start of s, at most maxClip characters.
func clip(s string) string {
	if r := []rune(s); len(r) > maxClip {
		return string(r[:maxClip-1]) + "…"
	}
	return s
}

// listed keeps the first maxListed entries and says how many more.
func listed(ss []string) []string {
	if len(ss) <= maxListed {
		return ss
	}
	return append(ss[:maxListed:maxListed], fmt.Sprintf("- … and %d more", len(ss)-maxListed))
}

// keyText says in words what an answer's key covers.
func keyText(key string) string {
	if exact, ok := strings.CutPrefix(key, "= "); ok {
		return "exactly `" + permit.Visible(exact) + "`"
	}
	return "`" + permit.Visible(key) + "` with other arguments inside the workspace, no other option"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// writesFile reports whether a redirection writes a file (other than
// /dev/null), rather than duplicating a descriptor.
func (r redirect) writesFile() bool {
	if !strings.Contains(r.op, ">") || r.target == "/dev/null" {
		return false
	}
	if strings.HasSuffix(r.op, "&") && (isDigits(r.target) || r.target == "-") {
		return false
	}
	return true
}

// titleLimit is how many characters of the command a title shows whole.
const titleLimit = 80

// isGlob reports whether bash expands w as a pattern.
func isGlob(w string) bool { return strings.ContainsAny(w, "*?[") }

// readOnly reports whether the command (its words after any wrapper)
// only reads: a plain program that writes nothing, with no option of its
// table that runs a program or writes a file — for git, a subcommand that
// only reads the repository. Plan mode runs such commands.
func readOnly(inner []word) bool {
	name := baseName(inner[0].text)
	table, plain := plainPrograms[name]
	if !plain || writers[name] || mayWrite[name] || inner[0].text != name {
		return false
	}
	args := inner[1:]
	if name == "git" {
		if len(args) == 0 || !gitReads[args[0].text] {
			return false
		}
		args = args[1:]
	}
	for _, a := range args {
		if a.text == "--" {
			break
		}
		if strings.HasPrefix(a.text, "-") && table.runsOrWrites(a.text) {
			return false
		}
	}
	return true
}

// mayWrite are plain programs with options that write files (sort -o,
// date -s, tree -o, file -C): not proven read-only, whatever their
// options, since their tables list what mm knows, not all there is.
var mayWrite = map[string]bool{"sort": true, "date": true, "tree": true, "file": true}

// gitReads are the git subcommands that only read the repository.
var gitReads = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "blame": true, "grep": true,
	"shortlog": true, "describe": true, "rev-parse": true, "ls-files": true, "cat-file": true,
	"ls-tree": true, "rev-list": true, "diff-tree": true, "merge-base": true, "show-ref": true,
	"for-each-ref": true, "version": true,
}
