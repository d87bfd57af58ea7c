package lsptool

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/tools"
)

//go:embed lsp.md
var description string

// Options configure the tool.
type Options struct {
	// Manager is the session's language servers; required.
	Manager *lspbridge.Manager
	// MaxResults bounds the locations and symbols listed; 0 means 50.
	MaxResults int
}

// Params are the arguments of a call.
type Params struct {
	Operation string `json:"operation" enum:"definition,references,hover,symbols,diagnostics,rename" desc:"what to ask"`
	Path      string `json:"path,omitempty" desc:"file (or directory, for diagnostics), relative to the workspace"`
	Symbol    string `json:"symbol,omitempty" desc:"identifier name, e.g. \"Hello\" or \"Server.Start\""`
	Line      int    `json:"line,omitempty" desc:"1-based line: which occurrence of symbol, or with column instead of symbol"`
	Column    int    `json:"column,omitempty" desc:"1-based column, only without symbol"`
	NewName   string `json:"new_name,omitempty" desc:"rename only: the new name"`
}

// New returns the lsp tool. Offer it only when opts.Manager.Available().
func New(opts Options) tools.Tool {
	if opts.MaxResults <= 0 {
		opts.MaxResults = 50
	}
	t := &tool{opts: opts, m: opts.Manager}
	t.ops = map[string]func(context.Context, tools.Env, Params) (tools.Result, error){
		"definition":  t.definition,
		"references":  t.references,
		"hover":       t.hover,
		"symbols":     t.symbols,
		"diagnostics": t.diagnostics,
		"rename":      t.rename,
	}
	return tools.New(tools.Spec[Params]{
		Name:        "lsp",
		Description: strings.TrimSpace(description),
		Kind:        tools.KindSearch,
		Caps:        tools.Reads | tools.WritesWorkspace, // rename edits
		Describe:    t.describe,
		Run:         t.run,
	})
}

type tool struct {
	opts Options
	m    *lspbridge.Manager
	ops  map[string]func(context.Context, tools.Env, Params) (tools.Result, error)
}

func (t *tool) describe(env tools.Env, p Params) tools.Call {
	title := "lsp " + p.Operation
	if p.Symbol != "" {
		title += " " + p.Symbol
	}
	if p.NewName != "" {
		title += " → " + p.NewName
	}
	c := tools.Call{}
	if p.Path != "" {
		title += " (" + p.Path + ")"
		if abs, err := tools.Resolve(env, p.Path); err == nil {
			c.Locations = []tools.Location{{Path: abs, Line: p.Line}}
		}
	}
	c.Title = title
	return c
}

func (t *tool) run(ctx context.Context, env tools.Env, p Params) (tools.Result, error) {
	op, ok := t.ops[p.Operation]
	if !ok {
		return tools.Errorf(`[error: unknown operation %q — use one of definition, references, hover, symbols, diagnostics, rename]`, p.Operation), nil
	}
	if t.m == nil || !t.m.Available() {
		return tools.Errorf("[error: no language server is available — use read_file and bash (grep) instead]"), nil
	}
	return op(ctx, env, p)
}

// position turns the arguments into a bridge position, confining the path.
func (t *tool) position(env tools.Env, p Params) (lspbridge.Position, string) {
	pos := lspbridge.Position{Symbol: strings.TrimSpace(p.Symbol), Line: p.Line, Column: p.Column}
	if p.Path != "" {
		abs, err := tools.Resolve(env, p.Path)
		if err != nil {
			return pos, err.Error()
		}
		pos.Path = abs
	}
	switch {
	case pos.Symbol == "" && (pos.Path == "" || p.Line < 1 || p.Column < 1):
		return pos, `[error: lsp ` + p.Operation + ` needs "symbol" (a name, e.g. "Hello") with "path" of a file that contains it — or "path", "line" and "column"]`
	case pos.Path == "" && p.Operation != "definition":
		return pos, `[error: lsp ` + p.Operation + ` needs "path": the file where "` + pos.Symbol + `" occurs (use lsp definition without path to find it)]`
	}
	return pos, ""
}

// failed words a bridge error for the model.
func failed(op string, err error) tools.Result {
	msg := err.Error()
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		msg = "the language server did not answer in time — try again, or use read_file and grep"
	case errors.Is(err, lspbridge.ErrNoServer):
		msg += " — use read_file and grep for this file"
	}
	return tools.Errorf("[error: lsp %s: %s]", op, msg)
}

func (t *tool) definition(ctx context.Context, env tools.Env, p Params) (tools.Result, error) {
	pos, bad := t.position(env, p)
	if bad != "" {
		return tools.Errorf("%s", bad), nil
	}
	locs, err := t.m.Definition(ctx, pos)
	if err != nil {
		return failed(p.Operation, err), nil
	}
	name := nameOf(env, p)
	if len(locs) == 0 {
		return tools.Result{Text: "no definition found for " + name}, nil
	}
	return t.listLocations(env, "definition of "+name, locs), nil
}

func (t *tool) references(ctx context.Context, env tools.Env, p Params) (tools.Result, error) {
	pos, bad := t.position(env, p)
	if bad != "" {
		return tools.Errorf("%s", bad), nil
	}
	locs, err := t.m.References(ctx, pos)
	if err != nil {
		return failed(p.Operation, err), nil
	}
	name := nameOf(env, p)
	if len(locs) == 0 {
		return tools.Result{Text: "no references to " + name + " (besides its declaration)"}, nil
	}
	return t.listLocations(env, count(len(locs), "reference")+" to "+name, locs), nil
}

func (t *tool) hover(ctx context.Context, env tools.Env, p Params) (tools.Result, error) {
	pos, bad := t.position(env, p)
	if bad != "" {
		return tools.Errorf("%s", bad), nil
	}
	text, err := t.m.Hover(ctx, pos)
	if err != nil {
		return failed(p.Operation, err), nil
	}
	if text == "" {
		return tools.Result{Text: "no information for " + nameOf(env, p)}, nil
	}
	var locs []tools.Location
	if pos.Path != "" {
		locs = []tools.Location{{Path: pos.Path, Line: p.Line}}
	}
	return tools.Result{Text: text, Locations: locs}, nil
}

func (t *tool) symbols(ctx context.Context, env tools.Env, p Params) (tools.Result, error) {
	var abs string
	if p.Path != "" {
		var err error
		if abs, err = tools.Resolve(env, p.Path); err != nil {
			return tools.Errorf("%s", err.Error()), nil
		}
	}
	if info, err := os.Stat(abs); abs != "" && err == nil && !info.IsDir() {
		syms, err := t.m.DocumentSymbols(ctx, abs)
		if err != nil {
			return failed(p.Operation, err), nil
		}
		if len(syms) == 0 {
			return tools.Result{Text: tools.Rel(env, abs) + " declares nothing"}, nil
		}
		return t.listSymbols(env, tools.Rel(env, abs)+":", syms, true), nil
	}
	if strings.TrimSpace(p.Symbol) == "" {
		return tools.Errorf(`[error: lsp symbols needs "path" of a file (for its outline) or "symbol" (a name to search the workspace for)]`), nil
	}
	dir := abs
	if dir == "" {
		dir = env.Cwd()
	}
	syms, err := t.m.WorkspaceSymbols(ctx, dir, strings.TrimSpace(p.Symbol))
	if err != nil {
		return failed(p.Operation, err), nil
	}
	if len(syms) == 0 {
		return tools.Result{Text: "no symbol matching " + p.Symbol + " in the workspace"}, nil
	}
	return t.listSymbols(env, "symbols matching "+p.Symbol+":", syms, false), nil
}

func (t *tool) diagnostics(ctx context.Context, env tools.Env, p Params) (tools.Result, error) {
	target := env.Cwd()
	if p.Path != "" {
		var err error
		if target, err = tools.Resolve(env, p.Path); err != nil {
			return tools.Errorf("%s", err.Error()), nil
		}
		if _, err := os.Stat(target); err != nil {
			return tools.Errorf("[error: %s does not exist — give an existing file or directory, or no path for the whole workspace]", p.Path), nil
		}
	}
	list, note, err := t.m.Diagnostics(ctx, target)
	if err != nil {
		return failed(p.Operation, err), nil
	}
	where := tools.Rel(env, target)
	if where == "." {
		where = "the workspace"
	}
	var b strings.Builder
	var locs []tools.Location
	if len(list) == 0 && note == "" {
		fmt.Fprintf(&b, "no problems in %s", where)
	} else {
		fmt.Fprintf(&b, "%s in %s:", count(len(list), "problem"), where)
		for i, d := range list {
			if i == t.opts.MaxResults {
				fmt.Fprintf(&b, "\n  … and %d more", len(list)-i)
				break
			}
			fmt.Fprintf(&b, "\n  %s:%d:%d: %s: %s", tools.Rel(env, d.Path), d.Line, d.Column, d.Severity, oneLine(d.Message))
			locs = append(locs, tools.Location{Path: d.Path, Line: d.Line})
		}
	}
	if note != "" {
		fmt.Fprintf(&b, "\n(%s)", note)
	}
	return tools.Result{Text: b.String(), Locations: locs}, nil
}

func (t *tool) listLocations(env tools.Env, head string, locs []lspbridge.Location) tools.Result {
	var b strings.Builder
	b.WriteString(head + ":")
	var out []tools.Location
	for i, l := range locs {
		if i == t.opts.MaxResults {
			fmt.Fprintf(&b, "\n  … and %d more", len(locs)-i)
			break
		}
		fmt.Fprintf(&b, "\n  %s:%d:%d: %s", tools.Rel(env, l.Path), l.Line, l.Column, l.Text)
		out = append(out, tools.Location{Path: l.Path, Line: l.Line})
	}
	return tools.Result{Text: b.String(), Locations: out}
}

func (t *tool) listSymbols(env tools.Env, head string, syms []lspbridge.Symbol, outline bool) tools.Result {
	var b strings.Builder
	b.WriteString(head)
	var out []tools.Location
	for i, s := range syms {
		if i == t.opts.MaxResults {
			fmt.Fprintf(&b, "\n  … and %d more", len(syms)-i)
			break
		}
		detail := ""
		if s.Detail != "" {
			detail = " " + s.Detail
		}
		if outline {
			fmt.Fprintf(&b, "\n%s%d: %s %s%s", strings.Repeat("  ", s.Depth+1), s.Line, s.Kind, s.Name, detail)
		} else {
			fmt.Fprintf(&b, "\n  %s:%d: %s %s%s", tools.Rel(env, s.Path), s.Line, s.Kind, s.Name, detail)
		}
		out = append(out, tools.Location{Path: s.Path, Line: s.Line})
	}
	return tools.Result{Text: b.String(), Locations: out}
}

func nameOf(env tools.Env, p Params) string {
	if p.Symbol != "" {
		return p.Symbol
	}
	return fmt.Sprintf("%s:%d:%d", p.Path, p.Line, p.Column)
}

func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// oneLine flattens a multi-line server message.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ; ")), " ")
}
