package shell

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A command line can change its own directory: `cd .git && echo x >>
// config` writes .git/config, and `cd sub && git diff` runs git in the
// repository at sub. So the paths a command names are resolved against
// the directory it runs in, which this file follows through the line —
// cd, pushd and popd, in lists, && and ||, blocks, subshells (whose cd
// stays inside), pipelines (each side a subshell), conditions and loops.
// Where a command may run in more than one directory (`cd x || true`),
// every one counts; where a cd goes to a directory computed when the line
// runs (`cd $X`, `cd "$(…)"`, `cd -`), the directory is unknown, and a
// relative path after it may be anything.

// frame is one directory a command may run in, with the stack of
// directories pushd left under it. dir is "" when it is computed when
// the line runs.
type frame struct {
	dir   string
	stack []string
}

func (f frame) key() string { return f.dir + "\x00" + strings.Join(f.stack, "\x00") }

// place is every directory a command may run in.
type place []frame

// maxFrames bounds how many directories are followed; past it, the
// place is unknown too.
const maxFrames = 8

// unknown reports whether the command may run in a directory computed
// when the line runs.
func (p place) unknown() bool {
	return slices.ContainsFunc(p, func(f frame) bool { return f.dir == "" })
}

// dirs are the directories known.
func (p place) dirs() []string {
	var ds []string
	for _, f := range p {
		if f.dir != "" && !slices.Contains(ds, f.dir) {
			ds = append(ds, f.dir)
		}
	}
	return ds
}

// union is every directory of ps, once.
func union(ps ...place) place {
	var out place
	seen := map[string]bool{}
	for _, p := range ps {
		for _, f := range p {
			if k := f.key(); !seen[k] {
				seen[k] = true
				out = append(out, f)
			}
		}
	}
	if len(out) > maxFrames {
		out = append(out[:maxFrames-1], frame{})
	}
	return out
}

// after is where the commands after a statement run: ok when it
// succeeded (what && continues with), fail when it failed (||).
type after struct{ ok, fail place }

func (o after) all() place { return union(o.ok, o.fail) }

// flow follows the directory through a parsed line.
type flow struct {
	src string
	at  map[*syntax.Stmt]place
	// cdpath says a bare directory name may be looked up in CDPATH, so
	// where `cd name` goes is not known.
	cdpath bool
	// moves says the line changes directory somewhere: a function's body,
	// which runs wherever it is called, then runs in an unknown one.
	moves bool
}

// places is the place every statement of f runs in, the line starting in
// start.
func places(src string, f *syntax.File, start place) map[*syntax.Stmt]place {
	fl := &flow{src: src, at: map[*syntax.Stmt]place{}, cdpath: os.Getenv("CDPATH") != "" || strings.Contains(src, "CDPATH"), moves: changesDir(f)}
	fl.list(f.Stmts, start)
	return fl.at
}

// list runs statements one after another.
func (fl *flow) list(stmts []*syntax.Stmt, in place) after {
	o := after{ok: in, fail: in}
	for i, st := range stmts {
		if i > 0 {
			in = o.all()
		}
		o = fl.stmt(st, in)
	}
	return o
}

// stmt records where st runs and says where what follows it runs.
func (fl *flow) stmt(st *syntax.Stmt, in place) after {
	fl.at[st] = in
	o := fl.command(st.Cmd, in)
	if st.Background || st.Coprocess {
		o = after{ok: in, fail: in} // a job of its own: its cd stays there
	}
	if st.Negated {
		o.ok, o.fail = o.fail, o.ok
	}
	// $(…) and <(…) in its words and redirections run where it starts,
	// in a subshell of their own.
	fl.nested(st.Cmd, in)
	for _, r := range st.Redirs {
		fl.nested(r, in)
	}
	return o
}

func (fl *flow) command(c syntax.Command, in place) after {
	same := after{ok: in, fail: in}
	switch c := c.(type) {
	case *syntax.CallExpr:
		return fl.call(c, in)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.AndStmt:
			x := fl.stmt(c.X, in)
			y := fl.stmt(c.Y, x.ok)
			return after{ok: y.ok, fail: union(x.fail, y.fail)}
		case syntax.OrStmt:
			x := fl.stmt(c.X, in)
			y := fl.stmt(c.Y, x.fail)
			return after{ok: union(x.ok, y.ok), fail: y.fail}
		default: // a pipeline: each side in a subshell of its own
			fl.stmt(c.X, in)
			fl.stmt(c.Y, in)
			return same
		}
	case *syntax.Subshell:
		fl.list(c.Stmts, in)
		return same
	case *syntax.Block:
		return fl.list(c.Stmts, in)
	case *syntax.IfClause:
		return fl.ifClause(c, in)
	case *syntax.WhileClause:
		return fl.loop(in, c.Cond, c.Do)
	case *syntax.ForClause:
		return fl.loop(in, nil, c.Do)
	case *syntax.CaseClause:
		all := in
		for _, item := range c.Items {
			all = union(all, fl.list(item.Stmts, in).all())
		}
		return after{ok: all, fail: all}
	case *syntax.FuncDecl:
		// The body runs where the function is called, later in the line:
		// here, unless the line changes directory. A body that changes
		// directory makes every directory after the definition unknown.
		body := in
		if fl.moves {
			body = union(in, place{{}})
		}
		fl.stmt(c.Body, body)
		if changesDir(c.Body) {
			return after{ok: body, fail: body}
		}
		return same
	case *syntax.TimeClause:
		if c.Stmt != nil {
			return fl.stmt(c.Stmt, in)
		}
	case *syntax.CoprocClause:
		fl.stmt(c.Stmt, in)
	}
	return same
}

func (fl *flow) ifClause(c *syntax.IfClause, in place) after {
	if c == nil {
		return after{ok: in, fail: in}
	}
	if len(c.Cond) == 0 { // else
		return fl.list(c.Then, in)
	}
	cond := fl.list(c.Cond, in)
	then := fl.list(c.Then, cond.ok)
	if c.Else == nil {
		return after{ok: union(then.ok, cond.fail), fail: then.fail}
	}
	els := fl.ifClause(c.Else, cond.fail)
	return after{ok: union(then.ok, els.ok), fail: union(then.fail, els.fail)}
}

// loop runs a loop's condition and body until the directories they may
// leave it in stop growing; a loop that keeps moving (cd .. each time)
// makes them unknown.
func (fl *flow) loop(in place, cond, body []*syntax.Stmt) after {
	all := in
	for range 3 {
		// Each pass places the statements again, where they run grows.
		c := fl.list(cond, all)
		b := fl.list(body, c.all())
		next := union(all, c.all(), b.all())
		if len(next) == len(all) {
			return after{ok: next, fail: next}
		}
		all = next
	}
	// Still moving: the statements inside may run anywhere too.
	all = union(all, place{{}})
	fl.list(cond, all)
	fl.list(body, all)
	return after{ok: all, fail: all}
}

// call follows cd, pushd and popd; other commands leave the directory as
// it is.
func (fl *flow) call(c *syntax.CallExpr, in place) after {
	same := after{ok: in, fail: in}
	var words []string
	for _, w := range c.Args {
		text, lit := literal(fl.src, w)
		if !lit {
			text = "\x00" // computed
		}
		words = append(words, text)
	}
	// Only the shell's own cd moves it: `command cd` and `builtin cd`
	// are that one; behind sudo, env or xargs it is a program of its own.
	for len(words) > 0 && (words[0] == "command" || words[0] == "builtin") {
		words = words[1:]
	}
	if len(words) == 0 {
		return same
	}
	name, args := words[0], words[1:]
	switch name {
	case "cd", "pushd", "popd":
	case "eval":
		// The script eval runs is this shell's: a cd in it moves it.
		if script := strings.Join(args, " "); strings.Contains(script, "cd") || strings.Contains(script, "pushd") || strings.Contains(script, "popd") || strings.Contains(script, "\x00") {
			u := union(in, place{{}})
			return after{ok: u, fail: u}
		}
		return same
	default:
		return same
	}
	for len(args) > 0 && (args[0] == "-L" || args[0] == "-P" || args[0] == "-e" || args[0] == "-@" || args[0] == "-n") {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	var ok place
	for _, f := range in {
		ok = append(ok, fl.move(name, args, f))
	}
	return after{ok: union(ok), fail: in}
}

// move is where a cd, pushd or popd with args leads from f.
func (fl *flow) move(name string, args []string, f frame) frame {
	unknown := frame{}
	switch {
	case name == "popd":
		if len(args) > 0 || len(f.stack) == 0 {
			return unknown
		}
		return frame{dir: f.stack[len(f.stack)-1], stack: f.stack[:len(f.stack)-1]}
	case len(args) == 0 && name == "pushd", len(args) > 1:
		return unknown // pushd alone swaps the top two; more arguments are an error
	}
	to := "~"
	if len(args) == 1 {
		to = args[0]
	}
	dir := fl.dirOf(f.dir, to)
	if dir == "" {
		return unknown
	}
	if name == "pushd" {
		return frame{dir: dir, stack: append(slices.Clone(f.stack), f.dir)}
	}
	return frame{dir: dir, stack: f.stack}
}

// dirOf is the directory cd to reaches from dir, "" when it is not known
// before the line runs.
func (fl *flow) dirOf(dir, to string) string {
	switch {
	case to == "" || strings.Contains(to, "\x00") || to == "-" || strings.HasPrefix(to, "+") || strings.HasPrefix(to, "-"):
		return ""
	case to == "~" || strings.HasPrefix(to, "~/"):
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		return filepath.Join(home, strings.TrimPrefix(to, "~"))
	case strings.HasPrefix(to, "~"):
		return "" // another user's home
	case filepath.IsAbs(to):
		return filepath.Clean(to)
	case dir == "":
		return ""
	case fl.cdpath && !strings.HasPrefix(to, "./") && !strings.HasPrefix(to, "../") && to != "." && to != "..":
		return "" // looked up in CDPATH first
	}
	return filepath.Join(dir, to)
}

// nested follows the commands of $(…), `…` and <(…) inside n that no
// statement of its own has placed: they start where n runs, and their cd
// stays inside.
func (fl *flow) nested(n syntax.Node, in place) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.Stmt:
			_, done := fl.at[m]
			return !done
		case *syntax.CmdSubst:
			fl.list(m.Stmts, in)
			return false
		case *syntax.ProcSubst:
			fl.list(m.Stmts, in)
			return false
		}
		return true
	})
}

// changesDir reports whether a cd, pushd or popd appears anywhere in n.
func changesDir(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(m syntax.Node) bool {
		if c, ok := m.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			name := c.Args[0].Lit()
			if (name == "command" || name == "builtin") && len(c.Args) > 1 {
				name = c.Args[1].Lit()
			}
			switch name {
			case "cd", "pushd", "popd", "eval":
				found = true
			}
		}
		return !found
	})
	return found
}
