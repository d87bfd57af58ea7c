package bash

import "strings"

// This file is a rough bash lexer, good enough to see which programs a
// command line runs, with which arguments and redirections. It is used to
// refuse a few commands and to compute the approval key, never to run
// anything: bash itself parses what runs. It removes quotes (so that
// `echo "rm -rf /"` is an echo), skips comments and heredoc bodies (so a
// file written with `cat > f <<EOF` is not read as commands), and treats
// `(`, `)` and backquotes as separators, so the commands inside a
// substitution or a subshell are seen as commands too.

// token is a word (quotes removed) or an operator.
type token struct {
	text string
	op   bool
	pos  int // byte offset of the token in the command line
}

// operators, longest first so that the longest match wins.
var operators = []string{
	"&>>", "<<<", "<<-",
	"&&", "||", "|&", ";;", ">>", "<<", "&>", ">&", "<&", "<>", ">|",
	";", "&", "|", "(", ")", "<", ">", "`",
}

// lexer holds the state of one lex call.
type lexer struct {
	s         string
	toks      []token
	word      strings.Builder
	start     int // offset of the word being read, -1 when none
	pending   []heredoc
	wantDelim string // "<<" or "<<-" when the next word is a heredoc delimiter
}

type heredoc struct {
	delim string
	dash  bool // <<- : leading tabs are ignored before the delimiter
}

func lex(s string) []token {
	l := &lexer{s: s, start: -1}
	for i := 0; i < len(s); {
		i = l.step(i)
	}
	l.flush()
	return l.toks
}

// step reads what starts at s[i] and returns where to go on.
func (l *lexer) step(i int) int {
	s := l.s
	switch c := s[i]; {
	case c == '\\':
		l.begin(i)
		if i+1 < len(s) && s[i+1] != '\n' {
			l.word.WriteByte(s[i+1])
		}
		return i + 2
	case c == '\'':
		l.begin(i)
		j := strings.IndexByte(s[i+1:], '\'')
		if j < 0 {
			l.word.WriteString(s[i+1:])
			return len(s)
		}
		l.word.WriteString(s[i+1 : i+1+j])
		return i + j + 2
	case c == '"':
		l.begin(i)
		for i++; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
				i++
				if s[i] == '\n' {
					continue
				}
			}
			l.word.WriteByte(s[i])
		}
		return i + 1
	case c == '#' && l.start < 0:
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(s)
	case c == ' ' || c == '\t':
		l.flush()
		return i + 1
	case c == '\n':
		l.flush()
		l.toks = append(l.toks, token{text: "\n", op: true, pos: i})
		i++
		for _, h := range l.pending {
			i = skipHeredoc(s, i, h)
		}
		l.pending = nil
		return i
	case strings.IndexByte(";&|()<>`", c) >= 0:
		return l.operator(i)
	default:
		l.begin(i)
		l.word.WriteByte(c)
		return i + 1
	}
}

// operator reads the operator at s[i]. Digits written right before a
// redirection are its file descriptor: `2>` is one token.
func (l *lexer) operator(i int) int {
	pos, fd := i, ""
	if c := l.s[i]; (c == '<' || c == '>') && l.start >= 0 && isDigits(l.s[l.start:i]) {
		pos, fd = l.start, l.s[l.start:i]
		l.word.Reset()
		l.start = -1
	} else {
		l.flush()
	}
	op := ";"
	for _, o := range operators {
		if strings.HasPrefix(l.s[i:], o) {
			op = o
			break
		}
	}
	l.toks = append(l.toks, token{text: fd + op, op: true, pos: pos})
	if op == "<<" || op == "<<-" {
		l.wantDelim = op
	}
	return i + len(op)
}

func (l *lexer) begin(i int) {
	if l.start < 0 {
		l.start = i
	}
}

func (l *lexer) flush() {
	if l.start < 0 {
		return
	}
	w := l.word.String()
	l.toks = append(l.toks, token{text: w, pos: l.start})
	if l.wantDelim != "" {
		l.pending = append(l.pending, heredoc{delim: w, dash: l.wantDelim == "<<-"})
		l.wantDelim = ""
	}
	l.word.Reset()
	l.start = -1
}

// skipHeredoc returns the offset just past the line that ends the heredoc
// body starting at s[i] (the end of s when the delimiter never comes).
func skipHeredoc(s string, i int, h heredoc) int {
	for i < len(s) {
		line, _, _ := strings.Cut(s[i:], "\n")
		i += len(line) + 1
		if h.dash {
			line = strings.TrimLeft(line, "\t")
		}
		if line == h.delim {
			break
		}
	}
	return min(i, len(s))
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// isRedirect reports whether an operator token is a redirection.
func isRedirect(op string) bool { return strings.ContainsAny(op, "<>") }

// command is one simple command: its words and redirections.
type command struct {
	words  []string
	redirs []redirect
}

type redirect struct{ op, target string }

// commands splits tokens into simple commands. Every operator that is not
// a redirection ends one, so pipelines, lists, subshells and substitutions
// all come out as their parts.
func commands(toks []token) []command {
	var (
		cmds []command
		cur  command
	)
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case !t.op:
			cur.words = append(cur.words, t.text)
		case isRedirect(t.text):
			r := redirect{op: t.text}
			if i+1 < len(toks) && !toks[i+1].op {
				r.target = toks[i+1].text
				i++
			}
			cur.redirs = append(cur.redirs, r)
		default:
			if len(cur.words) > 0 || len(cur.redirs) > 0 {
				cmds = append(cmds, cur)
			}
			cur = command{}
		}
	}
	if len(cur.words) > 0 || len(cur.redirs) > 0 {
		cmds = append(cmds, cur)
	}
	return cmds
}

// writesStdout reports whether a redirection sends standard output away
// from the shell's own output (to a file, or anywhere but another fd).
func (r redirect) writesStdout() bool {
	op := strings.TrimLeft(r.op, "0123456789")
	if fd := r.op[:len(r.op)-len(op)]; fd != "" && fd != "1" {
		return false
	}
	switch op {
	case ">", ">>", ">|", "&>", "&>>":
		return true
	case ">&":
		return !isDigits(r.target) && r.target != "-"
	}
	return false
}

// wrappers are commands that run their arguments as a command, with the
// options of each that take a value (so the value is not taken for the
// command).
var wrappers = map[string]string{
	"sudo": "ugCDhprtU", "doas": "uC", "nohup": "", "time": "", "command": "",
	"exec": "a", "builtin": "", "nice": "n", "ionice": "cnp", "env": "uSC",
	"timeout": "sk", "stdbuf": "ioe", "setsid": "", "xargs": "aEdILnPs",
}

// program strips the wrappers and variable assignments in front of a
// command: `sudo FOO=1 nice -n 5 rm -rf x` runs rm -rf x.
func program(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		if isAssignment(w) {
			words = words[1:]
			continue
		}
		valued, ok := wrappers[baseName(w)]
		if !ok {
			return words
		}
		words = words[1:]
		for len(words) > 0 && strings.HasPrefix(words[0], "-") {
			f := words[0]
			words = words[1:]
			if len(f) == 2 && strings.IndexByte(valued, f[1]) >= 0 && len(words) > 0 {
				words = words[1:]
			}
		}
		if baseName(w) == "timeout" && len(words) > 0 {
			words = words[1:] // the duration
		}
	}
	return nil
}

// isAssignment reports whether w is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func baseName(w string) string {
	if i := strings.LastIndexByte(w, '/'); i >= 0 {
		return w[i+1:]
	}
	return w
}
