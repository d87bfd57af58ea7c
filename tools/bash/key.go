package bash

import (
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// subcommanders are programs whose first argument says what they do, so an
// "always" answer is remembered for `git status`, not for all of git.
var subcommanders = map[string]bool{
	"git": true, "go": true, "npm": true, "pnpm": true, "yarn": true, "bun": true,
	"deno": true, "cargo": true, "make": true, "docker": true, "podman": true,
	"kubectl": true, "pip": true, "pip3": true, "uv": true, "poetry": true,
	"dotnet": true, "mvn": true, "gradle": true, "./gradlew": true, "mix": true,
	"bundle": true, "rake": true, "just": true, "gh": true, "terraform": true,
	"helm": true, "brew": true, "apt": true, "apt-get": true, "rustup": true,
	"composer": true, "task": true, "swift": true, "zig": true, "cmake": true,
}

// filters are read-only programs a command may be piped into without
// changing what it does: `go test ./... 2>&1 | tail -20` is still `go test`.
var filters = map[string]bool{
	"head": true, "tail": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"wc": true, "sort": true, "uniq": true, "cat": true, "cut": true, "column": true,
}

// approvalKey is what an "always" answer for line is remembered by: the
// program and, for git/go/npm-style tools, its subcommand ("git status").
// Leading `cd dir &&` steps and pipes into read-only filters are ignored.
// A line that does more (a list, a substitution, a subshell, a pipe into
// another program, a redirection into a file, variable assignments, a
// program named by an expansion, a subcommand hidden behind options) is
// keyed by the whole line, so that "always" never extends to a command
// the user has not seen.
func approvalKey(line string) string {
	whole := strings.TrimSpace(line)
	f, err := parse(line)
	if err != nil || len(f.Stmts) != 1 || runsCode(f) {
		return whole
	}
	steps := andList(f.Stmts[0])
	for len(steps) > 1 && isCd(line, steps[0]) {
		steps = steps[1:]
	}
	if len(steps) != 1 {
		return whole
	}
	st := steps[0]
	var first []string
	for i, el := range elements(st) {
		c, ok := el.Cmd.(*syntax.CallExpr)
		if !ok || !plainStmt(el) || len(c.Assigns) > 0 || len(c.Args) == 0 {
			return whole
		}
		for _, r := range el.Redirs {
			if redirOf(line, r).writesFile() {
				return whole
			}
		}
		var words []string
		for j, w := range c.Args {
			text, lit := literal(line, w)
			if j == 0 && !lit {
				return whole // the program is named by an expansion
			}
			if !lit {
				text = wordText(line, w)
			}
			words = append(words, text)
		}
		if i == 0 {
			first = words
		} else if !filters[words[0]] {
			return whole
		}
	}
	w := first
	if isAssignment(w[0]) || runsOther(w[0]) {
		return whole
	}
	if !subcommanders[w[0]] || len(w) == 1 {
		return w[0]
	}
	if strings.HasPrefix(w[1], "-") {
		return whole
	}
	return w[0] + " " + w[1]
}

// andList is the steps of an `a && b && c` list, or st alone.
func andList(st *syntax.Stmt) []*syntax.Stmt {
	if b, ok := st.Cmd.(*syntax.BinaryCmd); ok && b.Op == syntax.AndStmt && plainStmt(st) && len(st.Redirs) == 0 {
		return append(andList(b.X), andList(b.Y)...)
	}
	return []*syntax.Stmt{st}
}

// plainStmt reports whether a statement runs in the foreground as
// written: not negated, not in the background, no coprocess.
func plainStmt(st *syntax.Stmt) bool {
	return !st.Negated && !st.Background && !st.Coprocess && !st.Disown
}

// isCd reports whether st is a plain `cd dir`.
func isCd(src string, st *syntax.Stmt) bool {
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || !plainStmt(st) || len(st.Redirs) > 0 || len(c.Assigns) > 0 || len(c.Args) > 2 {
		return false
	}
	w, ok := literal(src, c.Args[0])
	return ok && w == "cd"
}

// runsOther reports whether a program runs a command or script given as
// its argument (sudo, env, bash -c, eval, xargs…): remembering only its
// name would let "always" cover any command at all.
func runsOther(name string) bool {
	if _, ok := wrappers[baseName(name)]; ok {
		return true
	}
	switch baseName(name) {
	case "eval", "source", ".", "find", "watch", "ssh", "parallel":
		return true
	}
	return isShell(baseName(name))
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

// titleLimit is how many characters of the command a title shows.
const titleLimit = 80

// title is what the user sees for the call: "Run `cmd`", on one line.
func title(line string) string {
	line = strings.TrimSpace(line)
	first, rest, multi := strings.Cut(line, "\n")
	first = strings.TrimSpace(first)
	if utf8.RuneCountInString(first) > titleLimit {
		first = string([]rune(first)[:titleLimit-1]) + "…"
		multi = false
	}
	if multi && strings.TrimSpace(rest) != "" {
		first += " …"
	}
	return "Run `" + first + "`"
}
