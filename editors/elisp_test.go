package editors

import (
	"fmt"
	"strings"
	"testing"
)

// sexp is one Elisp form: a string, an atom (symbol, keyword, number), a
// list, or a quoted form ('x, #'x).
type sexp struct {
	str    string
	isStr  bool
	atom   string
	list   []*sexp
	isList bool
	quoted *sexp
}

func (s *sexp) head() string {
	if s == nil || !s.isList || len(s.list) == 0 {
		return ""
	}
	return s.list[0].atom
}

func unquote(s *sexp) *sexp {
	for s != nil && s.quoted != nil {
		s = s.quoted
	}
	return s
}

// readElisp reads every top-level form of src. It knows comments, strings
// with escapes, character literals, quote, function quote and backquote,
// dotted pairs and vectors: enough to prove that forms and strings balance
// and to walk the configuration, not a full Lisp reader.
func readElisp(src string) ([]*sexp, error) {
	r := &reader{src: src}
	var forms []*sexp
	for {
		r.skip()
		if r.pos >= len(r.src) {
			return forms, nil
		}
		f, err := r.form()
		if err != nil {
			return nil, err
		}
		forms = append(forms, f)
	}
}

type reader struct {
	src string
	pos int
}

func (r *reader) errorf(format string, args ...any) error {
	line := 1 + strings.Count(r.src[:min(r.pos, len(r.src))], "\n")
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

func (r *reader) skip() {
	for r.pos < len(r.src) {
		switch c := r.src[r.pos]; {
		case c == ';':
			for r.pos < len(r.src) && r.src[r.pos] != '\n' {
				r.pos++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			r.pos++
		default:
			return
		}
	}
}

func (r *reader) form() (*sexp, error) {
	r.skip()
	if r.pos >= len(r.src) {
		return nil, r.errorf("unexpected end of file: a form is not closed")
	}
	switch c := r.src[r.pos]; c {
	case '(', '[':
		closer := byte(')')
		if c == '[' {
			closer = ']'
		}
		r.pos++
		s := &sexp{isList: true}
		for {
			r.skip()
			if r.pos >= len(r.src) {
				return nil, r.errorf("unexpected end of file: %q is not closed", c)
			}
			if r.src[r.pos] == closer {
				r.pos++
				return s, nil
			}
			if r.src[r.pos] == ')' || r.src[r.pos] == ']' {
				return nil, r.errorf("%q closes a %q", r.src[r.pos], c)
			}
			f, err := r.form()
			if err != nil {
				return nil, err
			}
			s.list = append(s.list, f)
		}
	case ')', ']':
		return nil, r.errorf("unbalanced %q", c)
	case '"':
		return r.string()
	case '\'', '`', ',':
		r.pos++
		if c == ',' && r.pos < len(r.src) && r.src[r.pos] == '@' {
			r.pos++
		}
		q, err := r.form()
		return &sexp{quoted: q}, err
	case '#':
		if strings.HasPrefix(r.src[r.pos:], "#'") {
			r.pos += 2
			q, err := r.form()
			return &sexp{quoted: q}, err
		}
	case '?':
		r.pos++
		if r.pos < len(r.src) && r.src[r.pos] == '\\' {
			r.pos++
		}
		r.pos++ // the character itself
		return &sexp{atom: "?char"}, nil
	}
	start := r.pos
	for r.pos < len(r.src) && !strings.ContainsRune(" \t\n\r\f()[]\";'", rune(r.src[r.pos])) {
		if r.src[r.pos] == '\\' {
			r.pos++
		}
		r.pos++
	}
	if r.pos == start {
		return nil, r.errorf("unexpected %q", r.src[r.pos])
	}
	return &sexp{atom: r.src[start:r.pos]}, nil
}

func (r *reader) string() (*sexp, error) {
	r.pos++ // opening quote
	var b strings.Builder
	for r.pos < len(r.src) {
		c := r.src[r.pos]
		switch c {
		case '"':
			r.pos++
			return &sexp{str: b.String(), isStr: true}, nil
		case '\\':
			r.pos++
			if r.pos < len(r.src) {
				switch e := r.src[r.pos]; e {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '\n':
				default:
					b.WriteByte(e)
				}
			}
		default:
			b.WriteByte(c)
		}
		r.pos++
	}
	return nil, r.errorf("unexpected end of file: a string is not closed")
}

// findCall returns the first list, at any depth, whose head is name.
func findCall(forms []*sexp, name string) *sexp {
	for _, f := range forms {
		if f == nil {
			continue
		}
		if f.head() == name {
			return f
		}
		if f.quoted != nil {
			if c := findCall([]*sexp{f.quoted}, name); c != nil {
				return c
			}
		}
		if c := findCall(f.list, name); c != nil {
			return c
		}
	}
	return nil
}

func TestElispReader(t *testing.T) {
	for _, bad := range []string{`(a "b`, `(a (b)`, `a)`, `(a ]`, `"x`} {
		if _, err := readElisp(bad); err == nil {
			t.Errorf("readElisp(%q) accepted unbalanced input", bad)
		}
	}
	forms, err := readElisp(`;; c
(f :k "a \"q\" ; not a comment" :l '("x" "y") #'g ?\( [v])`)
	if err != nil {
		t.Fatal(err)
	}
	f := findCall(forms, "f")
	if f == nil || len(f.list) != 8 || f.list[2].str != `a "q" ; not a comment` || len(unquote(f.list[4]).list) != 2 {
		t.Fatalf("forms = %+v", forms)
	}
}
