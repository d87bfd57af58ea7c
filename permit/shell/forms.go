package shell

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// This file reads the forms in which a command line spells a command
// other than the words it shows: a brace expansion that forms the program
// (`{rm,-f,x}`), env's -S string, a shell's options before -c, ~user
// paths. Each is read the way bash (or env) reads it, with the shell
// library's own expansion where it has one; what cannot be read is
// reported, so the caller asks.

// maxBraceWords bounds the words one brace expansion may form.
const maxBraceWords = 64

// runWords are the words a command will run with: each word's brace
// expansion done (mvdan.cc/sh's, as bash does it) and env -S strings split.
// ok is false when a word cannot be read so (an expansion past the bound,
// an -S string computed when the line runs).
func runWords(src string, call *syntax.CallExpr) (ws []word, braces, ok bool) {
	ok = true
	for _, w := range call.Args {
		text, lit := literal(src, w)
		if !lit {
			ws = append(ws, word{wordText(src, w), false})
			continue
		}
		cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
		if !syntax.SplitBraces(cp) {
			ws = append(ws, word{text, true})
			continue
		}
		braces = true
		n := 0
		for x, err := range expand.BracesSeq(nil, cp) {
			if n++; err != nil || n > maxBraceWords {
				ok = false
				break
			}
			ws = append(ws, word{wordText(src, x), true})
		}
	}
	ws, split := splitEnv(ws)
	return ws, braces, ok && split
}

// splitEnv replaces, for an env in front of a command, its -S STRING
// (--split-string) by the words env splits it into. ok is false when the
// string is computed or holds what env would expand (${VAR}).
func splitEnv(ws []word) ([]word, bool) {
	for i := 0; i < len(ws); i++ {
		if isAssignment(ws[i].text) {
			continue
		}
		if baseName(ws[i].text) != "env" {
			if _, wrapper := wrappers[baseName(ws[i].text)]; !wrapper {
				return ws, true
			}
			continue
		}
		for j := i + 1; j < len(ws); j++ {
			a := ws[j].text
			var str string
			var next int
			switch {
			case a == "-S" || a == "--split-string":
				if j+1 >= len(ws) {
					return ws, true
				}
				if !ws[j+1].literal {
					return ws, false
				}
				str, next = ws[j+1].text, j+2
			case strings.HasPrefix(a, "--split-string="):
				str, next = strings.TrimPrefix(a, "--split-string="), j+1
			case strings.HasPrefix(a, "-S"):
				str, next = a[2:], j+1
			case strings.HasPrefix(a, "-") && !isAssignment(a):
				continue
			default:
				j = len(ws)
				continue
			}
			fields, ok := splitString(str)
			if !ok || !ws[j].literal {
				return ws, false
			}
			out := append(append(append([]word(nil), ws[:j]...), fields...), ws[next:]...)
			return out, true
		}
	}
	return ws, true
}

// splitString splits env -S's string into words, quotes and backslashes
// read as a shell reads them; false when it holds an expansion.
func splitString(s string) ([]word, bool) {
	if strings.Contains(s, "$") || strings.Contains(s, "`") {
		return nil, false
	}
	f, err := parse(s)
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(f.Stmts[0].Redirs) > 0 {
		return nil, false
	}
	var ws []word
	for _, w := range call.Args {
		text, lit := literal(s, w)
		if !lit {
			return nil, false
		}
		ws = append(ws, word{text, true})
	}
	return ws, true
}

// shells are the programs that run a script given with -c, a script
// file, or what they read on their input.
var shells = map[string]bool{
	"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true,
	"yash": true, "posh": true, "rbash": true, "fish": true, "csh": true, "tcsh": true,
}

func isShell(name string) bool { return shells[name] }

// shellRun is what a shell run with args runs: the script of -c, or a
// script file, or (neither) what it reads on its input.
type shellRun struct {
	script string
	hasC   bool
	file   string
}

// readShell reads a shell's arguments as bash does: options first —
// bundles of letters (-ec, +x), -o/+o and -O/+O with their value, long
// options (--norc, --rcfile FILE) — up to -- or the first word that is
// not one; with -c the first word after them is the script.
func readShell(args []string) shellRun {
	var r shellRun
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'c':
				r.hasC = a[0] == '-'
			case 'o', 'O':
				i++ // takes the next word
			}
		}
	}
	rest := args[min(i, len(args)):]
	switch {
	case r.hasC && len(rest) > 0:
		r.script = rest[0]
	case !r.hasC && len(rest) > 0:
		r.file = rest[0]
	}
	return r
}

// tildeHome expands a leading ~ (home) or ~user as bash does: ~user only
// when the user exists (bash leaves ~nosuchuser as it is). It returns the
// home, the rest of p after the tilde word, and whether p was expanded.
func tildeHome(p, home string) (string, string, bool) {
	if !strings.HasPrefix(p, "~") {
		return "", "", false
	}
	name, rest := p[1:], ""
	if i := strings.IndexByte(name, '/'); i >= 0 {
		name, rest = name[:i], name[i:]
	}
	if name == "" {
		if home == "" {
			return "", "", false
		}
		return home, rest, true
	}
	u, err := user.Lookup(name)
	if err != nil || u.HomeDir == "" {
		return "", "", false
	}
	return u.HomeDir, rest, true
}

// isSelf reports whether the program word names mm itself: by its name
// (mm, or the running executable's, wherever it lies: a copy is mm too),
// or as a path to the executable that is running.
func isSelf(prog, dir string) bool {
	base := baseName(prog)
	exe, err := os.Executable()
	if base == "mm" || err == nil && base == filepath.Base(exe) {
		return true
	}
	if err != nil {
		return false
	}
	p := prog
	if !strings.Contains(p, "/") {
		found, err := exec.LookPath(p)
		if err != nil {
			return false
		}
		p = found
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	a, err1 := os.Stat(p)
	b, err2 := os.Stat(exe)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// changesWhatRuns are the variables that change which program a command
// name runs, or what a shell runs before its script: a command after one
// is not the one its words name.
var changesWhatRuns = map[string]bool{
	"PATH": true, "BASH_ENV": true, "ENV": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true,
	"IFS": true, "PROMPT_COMMAND": true, "SHELLOPTS": true, "BASHOPTS": true,
}

// defines reports whether a command makes a later command name run
// something else: alias, hash, enable, and shopt turning on
// expand_aliases.
func defines(prog string, words []string) bool {
	switch prog {
	case "alias", "hash", "enable":
		return true
	case "shopt":
		return slices.Contains(words, "expand_aliases")
	}
	return false
}
