package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file reads a command line with a real bash parser
// (mvdan.cc/sh/v3/syntax), to see which programs it runs, with which
// arguments and redirections. It is used to refuse a few commands and to
// compute the approval key, never to run anything: bash itself parses
// what runs. Quotes are removed from words (`echo "rm -rf /"` is an
// echo), comments and quoted here-document bodies are text, and the
// commands inside pipelines, lists, subshells, groups, functions,
// conditions, loops, $(…), `…`, <(…) and unquoted here-documents are all
// commands too.

// parse parses line as bash; the error is bash's own objection, near
// enough.
func parse(line string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
}

// command is one simple command: its words and redirections, as text.
type command struct {
	words  []string
	redirs []redirect
}

type redirect struct{ op, target string }

// commands lists every simple command of the tree, at any depth, in
// source order — and every redirected compound command ((…) > x) as a
// command without words.
func commands(src string, root syntax.Node) []command {
	var cmds []command
	syntax.Walk(root, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok {
			return true
		}
		var c command
		for _, r := range st.Redirs {
			c.redirs = append(c.redirs, redirOf(src, r))
		}
		if call, ok := st.Cmd.(*syntax.CallExpr); ok {
			for _, w := range call.Args {
				c.words = append(c.words, wordText(src, w))
			}
		}
		if len(c.words) > 0 || len(c.redirs) > 0 {
			cmds = append(cmds, c)
		}
		return true
	})
	return cmds
}

func redirOf(src string, r *syntax.Redirect) redirect {
	op := r.Op.String()
	if r.N != nil {
		op = r.N.Value + op
	}
	var target string
	if r.Word != nil {
		target = wordText(src, r.Word)
	}
	return redirect{op: op, target: target}
}

// wordText is a word with its quotes removed and escapes resolved;
// expansions ($HOME, ${HOME}, $(…)) stay as they are written, since the
// checks look for them by name.
func wordText(src string, w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		partText(src, &b, p, false)
	}
	return b.String()
}

func partText(src string, b *strings.Builder, p syntax.WordPart, quoted bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, quoted))
	case *syntax.SglQuoted:
		if p.Dollar {
			b.WriteString(ansiC(p.Value))
		} else {
			b.WriteString(p.Value)
		}
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			partText(src, b, q, true)
		}
	default:
		b.WriteString(source(src, p))
	}
}

// source is the text of n as written in src.
func source(src string, n syntax.Node) string {
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	if from < 0 || to > len(src) || from > to {
		return ""
	}
	return src[from:to]
}

// unescape resolves backslashes as bash does outside quotes (any
// character) or inside double quotes ($ ` " \ and newline only).
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		switch {
		case next == '\n':
			i++
		case !quoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte('\\')
		}
	}
	return b.String()
}

// ansiC resolves the common escapes of a $'…' string (\n, \t, \e…), so
// that `bash -c $'a\nb'` is read as two lines, as bash runs it.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(c)
		case 'x', 'u', 'U', '0', '1', '2', '3', '4', '5', '6', '7':
			// \xHH, \uHHHH, \UHHHHHHHH and \NNN name a character: `$'\x72m'`
			// is rm.
			base, max, from := 16, 2, i+1
			switch c {
			case 'u':
				max = 4
			case 'U':
				max = 8
			default:
				if c != 'x' {
					base, max, from = 8, 3, i
				}
			}
			j := from
			for j < len(s) && j-from < max && digitIn(s[j], base) {
				j++
			}
			if j == from {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			n, _ := strconv.ParseUint(s[from:j], base, 32)
			if c == 'u' || c == 'U' {
				b.WriteRune(rune(n))
			} else {
				b.WriteByte(byte(n))
			}
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

func digitIn(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case c == '8' || c == '9':
		return base == 16
	}
	c |= 0x20
	return base == 16 && c >= 'a' && c <= 'f'
}

// literal is the word's text when it is plain text only (no expansion
// of any kind), and whether it is.
func literal(src string, w *syntax.Word) (string, bool) {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return "", false
				}
			}
		default:
			return "", false
		}
	}
	return wordText(src, w), true
}

// runsCode reports whether the tree holds a command, process or
// arithmetic substitution anywhere: code that runs besides the visible
// commands.
func runsCode(root syntax.Node) bool {
	found := false
	syntax.Walk(root, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp:
			found = true
		}
		return !found
	})
	return found
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

// wrappers are commands that run their arguments as a command, with the
// options of each that take a value (so the value is not taken for the
// command).
var wrappers = map[string]string{
	"sudo": "ugCDhprtU", "doas": "uC", "nohup": "", "time": "", "command": "",
	"exec": "a", "builtin": "", "nice": "n", "ionice": "cnp", "env": "uSC",
	"timeout": "sk", "stdbuf": "ioe", "setsid": "", "xargs": "aEdILnPs",
	"busybox": "", "toybox": "",
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
