package bash

import (
	"strings"
	"unicode/utf8"
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
// A line that does more (a list, a substitution, a pipe into another
// program, a redirection into a file, variable assignments, a subcommand
// hidden behind options) is keyed by the whole line, so that "always"
// never extends to a command the user has not seen.
func approvalKey(line string) string {
	whole := strings.TrimSpace(line)
	if strings.Contains(line, "$(") || strings.Contains(line, "`") {
		return whole
	}
	toks := lex(line)
	for len(toks) > 0 && toks[len(toks)-1].op && toks[len(toks)-1].text == "\n" {
		toks = toks[:len(toks)-1]
	}
	// Skip leading `cd dir &&`.
	for len(toks) >= 3 && toks[0].text == "cd" && !toks[0].op && !toks[1].op && toks[2].op && toks[2].text == "&&" {
		toks = toks[3:]
	}
	var first command
	for i, seg := range splitPipeline(toks) {
		if seg == nil {
			return whole
		}
		c := commands(seg)
		if len(c) != 1 {
			return whole
		}
		if i == 0 {
			first = c[0]
			continue
		}
		if len(c[0].words) == 0 || !filters[c[0].words[0]] {
			return whole
		}
	}
	for _, r := range first.redirs {
		if r.writesFile() {
			return whole
		}
	}
	w := first.words
	if len(w) == 0 || isAssignment(w[0]) || runsOther(w[0]) {
		return whole
	}
	if !subcommanders[w[0]] {
		return w[0]
	}
	if len(w) == 1 {
		return w[0]
	}
	if strings.HasPrefix(w[1], "-") {
		return whole
	}
	return w[0] + " " + w[1]
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

// splitPipeline splits toks at pipes; a nil segment means the line holds
// another operator (a list, a background job, a subshell).
func splitPipeline(toks []token) [][]token {
	var segs [][]token
	from := 0
	for i, t := range toks {
		if !t.op || isRedirect(t.text) {
			continue
		}
		if t.text != "|" && t.text != "|&" {
			return [][]token{nil}
		}
		segs = append(segs, toks[from:i])
		from = i + 1
	}
	return append(segs, toks[from:])
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
