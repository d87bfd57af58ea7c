package lspbridge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/protocol"
)

// Position names a place for a query. Small models count columns badly,
// so the usual form is a file and a symbol name, which mm finds: its
// declaration in the file if there is one, else its first use; Line, when
// given, picks the occurrence on that line. Without Symbol, Line and
// Column (1-based, in characters) are used as given. Without Path, the
// symbol is looked up in the workspace.
type Position struct {
	Path   string
	Symbol string
	Line   int
	Column int
}

// Location is a place a query answered with.
type Location struct {
	Path   string
	Line   int // 1-based
	Column int // 1-based, in characters
	// Text is the line's text, trimmed, for the model to read in place.
	Text string
}

// Symbol is a declaration in a file or the workspace.
type Symbol struct {
	Name   string
	Kind   string // "function", "method", "struct"…
	Detail string
	Location
	Depth int // nesting in a document outline
}

// FileChange is one file's content before and after an edit mm computed
// (a rename), not yet written.
type FileChange struct {
	Path     string
	Old, New []byte
}

// queryWait bounds a query: the server may first have to load the
// workspace.
func (m *Manager) queryWait() time.Duration { return 2 * m.cfg.wait() }

// target is a resolved position.
type target struct {
	srv  *server
	proc *proc
	path string
	text []byte
	pos  protocol.Position
	name string // the symbol's name, for messages
}

func (t target) params() protocol.TextDocumentPositionParams {
	return protocol.TextDocumentPositionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: fileURI(t.path)},
		Position:     t.pos,
	}
}

// open gets the server for path ready and holding the file's text from
// disk.
func (m *Manager) open(ctx context.Context, path string) (*server, *proc, []byte, error) {
	path = canonical(path)
	s := m.serverFor(path, true)
	if s == nil {
		return nil, nil, nil, fmt.Errorf("%w: %s (languages with a server: %s)", ErrNoServer, relTo(m.base, path), strings.Join(m.Languages(), ", "))
	}
	text, err := m.cfg.files().ReadFile(ctx, path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read %s: %w", relTo(m.base, path), err)
	}
	p, err := s.ready(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := s.syncDoc(ctx, path, text); err != nil {
		return nil, nil, nil, err
	}
	return s, p, text, nil
}

// resolve finds the LSP position of pos.
func (m *Manager) resolve(ctx context.Context, pos Position) (target, error) {
	if pos.Path == "" {
		if pos.Symbol == "" {
			return target{}, errors.New(`give "path" and "symbol" (or "line" and "column")`)
		}
		sym, err := m.findInWorkspace(ctx, pos.Symbol)
		if err != nil {
			return target{}, err
		}
		pos = Position{Path: sym.Path, Symbol: lastPart(pos.Symbol), Line: sym.Line}
	}
	s, p, text, err := m.open(ctx, pos.Path)
	if err != nil {
		return target{}, err
	}
	t := target{srv: s, proc: p, path: canonical(pos.Path), text: text, name: pos.Symbol}
	rel := relTo(m.base, t.path)
	if pos.Symbol == "" {
		if pos.Line < 1 || pos.Column < 1 {
			return target{}, fmt.Errorf(`give "symbol" (a name in %s), or "line" and "column" (1-based)`, rel)
		}
		off, ok := charOffset(text, pos.Line, pos.Column)
		if !ok {
			return target{}, fmt.Errorf("%s has no line %d", rel, pos.Line)
		}
		t.pos = positionOf(text, off)
		t.name = fmt.Sprintf("%s:%d:%d", rel, pos.Line, pos.Column)
		return t, nil
	}
	off, err := m.findSymbol(ctx, t, pos.Symbol, pos.Line)
	if err != nil {
		return target{}, err
	}
	t.pos = positionOf(text, off)
	return t, nil
}

// findSymbol finds the byte offset of name in t's file: on line when
// given; else its declaration there (from the server's outline); else its
// first whole-word occurrence. A qualified name ("a.Scale",
// "Server.Start") is found by its last part.
func (m *Manager) findSymbol(ctx context.Context, t target, name string, line int) (int, error) {
	rel := relTo(m.base, t.path)
	word := lastPart(name)
	if word == "" {
		return 0, fmt.Errorf("%q is not a symbol name", name)
	}
	if line > 0 {
		start, end, ok := lineAt(t.text, line-1)
		if !ok {
			return 0, fmt.Errorf("%s has no line %d", rel, line)
		}
		if hits := findWord(t.text, word, start, end); len(hits) > 0 {
			return hits[0], nil
		}
		return 0, fmt.Errorf("%q is not on line %d of %s%s", word, line, rel, m.linesOf(t.text, word))
	}
	if syms, err := m.documentSymbols(ctx, t.srv, t.proc, t.path, t.text); err == nil {
		for _, s := range syms {
			if symbolMatches(s.Name, name) {
				start, end, ok := lineAt(t.text, s.Line-1)
				if !ok {
					continue
				}
				if hits := findWord(t.text, word, start, end); len(hits) > 0 {
					return hits[0], nil
				}
			}
		}
	}
	if hits := findWord(t.text, word, 0, len(t.text)); len(hits) > 0 {
		return hits[0], nil
	}
	return 0, fmt.Errorf("%q does not occur in %s — check the name, or use the symbols operation to list what the file declares", word, rel)
}

// linesOf lists the lines a word occurs on, for a repair hint.
func (m *Manager) linesOf(text []byte, word string) string {
	var lines []string
	for _, off := range findWord(text, word, 0, len(text)) {
		lines = append(lines, fmt.Sprint(int(positionOf(text, off).Line)+1))
		if len(lines) == 10 {
			break
		}
	}
	if len(lines) == 0 {
		return " (it does not occur in the file)"
	}
	return " (it is on line " + strings.Join(slices.Compact(lines), ", ") + ")"
}

// symbolMatches compares an outline name (gopls says "(*Server).Start",
// pyright "start") with what the model wrote ("Server.Start", "Start").
func symbolMatches(outline, want string) bool {
	if outline == want {
		return true
	}
	clean := strings.NewReplacer("(", "", ")", "", "*", "").Replace(outline)
	return clean == want || lastPart(clean) == want
}

func lastPart(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// findInWorkspace finds where a symbol is declared, by workspace symbol
// search in every server started so far (and those Warm finds).
func (m *Manager) findInWorkspace(ctx context.Context, name string) (Symbol, error) {
	syms, err := m.WorkspaceSymbols(ctx, "", lastPart(name))
	if err != nil {
		return Symbol{}, err
	}
	var exact []Symbol
	for _, s := range syms {
		if symbolMatches(s.Name, lastPart(name)) {
			exact = append(exact, s)
		}
	}
	if len(exact) == 0 {
		return Symbol{}, fmt.Errorf("no declaration of %q found in the workspace — give \"path\" too, or check the name", name)
	}
	// The full name first ("Server.Start" over another type's Start),
	// then code before tests.
	full := func(s Symbol) int {
		if symbolMatches(s.Name, name) || symbolMatches(s.Detail+"."+lastPart(s.Name), name) {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(exact, func(a, b Symbol) int {
		return cmp.Or(cmp.Compare(full(a), full(b)), cmp.Compare(isTestFile(a.Path), isTestFile(b.Path)), cmp.Compare(a.Path, b.Path))
	})
	return exact[0], nil
}

func isTestFile(p string) int {
	b := filepath.Base(p)
	if strings.HasSuffix(b, "_test.go") || strings.HasPrefix(b, "test_") {
		return 1
	}
	return 0
}

// call sends a request and decodes its result with encoding/json.
func call(ctx context.Context, p *proc, method string, params, out any) error {
	var raw json.RawMessage
	if _, err := p.conn.Call(ctx, method, params, &raw); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: decode result: %w", method, err)
	}
	return nil
}

// Definition finds where the symbol at pos is declared.
func (m *Manager) Definition(ctx context.Context, pos Position) ([]Location, error) {
	ctx, cancel := context.WithTimeout(ctx, m.queryWait())
	defer cancel()
	t, err := m.resolve(ctx, pos)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := call(ctx, t.proc, "textDocument/definition", &protocol.DefinitionParams{TextDocumentPositionParams: t.params()}, &raw); err != nil {
		return nil, err
	}
	return m.locations(ctx, t.srv, raw), nil
}

// References finds the uses of the symbol at pos, without its declaration.
func (m *Manager) References(ctx context.Context, pos Position) ([]Location, error) {
	ctx, cancel := context.WithTimeout(ctx, m.queryWait())
	defer cancel()
	t, err := m.resolve(ctx, pos)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	params := &protocol.ReferenceParams{TextDocumentPositionParams: t.params(), Context: protocol.ReferenceContext{IncludeDeclaration: false}}
	if err := call(ctx, t.proc, "textDocument/references", params, &raw); err != nil {
		return nil, err
	}
	return m.locations(ctx, t.srv, raw), nil
}

// locations decodes Location | Location[] | LocationLink[] and adds each
// line's text.
func (m *Manager) locations(ctx context.Context, s *server, raw json.RawMessage) []Location {
	var many []struct {
		URI                  protocol.DocumentURI `json:"uri"`
		Range                *protocol.Range      `json:"range"`
		TargetURI            protocol.DocumentURI `json:"targetUri"`
		TargetSelectionRange *protocol.Range      `json:"targetSelectionRange"`
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		raw = append(append([]byte{'['}, raw...), ']')
	}
	_ = json.Unmarshal(raw, &many)
	files := fileCache{ctx: ctx, s: s}
	var out []Location
	for _, l := range many {
		u, r := l.URI, l.Range
		if l.TargetURI != "" {
			u, r = l.TargetURI, l.TargetSelectionRange
		}
		if u == "" || r == nil {
			continue
		}
		out = append(out, files.location(s.pathOf(u), r.Start))
	}
	return out
}

// fileCache reads each file once per answer: the open document's text,
// else the view's (Config.Files).
type fileCache struct {
	ctx   context.Context
	s     *server
	texts map[string][]byte
}

func (c *fileCache) text(path string) []byte {
	if t, ok := c.texts[path]; ok {
		return t
	}
	if c.texts == nil {
		c.texts = map[string][]byte{}
	}
	var t []byte
	if c.s != nil {
		c.s.mu.Lock()
		if d := c.s.docs[path]; d != nil {
			t = d.text
		}
		c.s.mu.Unlock()
	}
	if t == nil && c.s != nil && c.s.files != nil {
		t, _ = c.s.files.ReadFile(c.ctx, path)
	}
	c.texts[path] = t
	return t
}

func (c *fileCache) location(path string, p protocol.Position) Location {
	text := c.text(path)
	off := offsetOf(text, p)
	return Location{Path: path, Line: int(p.Line) + 1, Column: column(text, off), Text: lineText(text, int(p.Line)+1)}
}

// Hover returns the server's description of the symbol at pos, as plain
// text.
func (m *Manager) Hover(ctx context.Context, pos Position) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, m.queryWait())
	defer cancel()
	t, err := m.resolve(ctx, pos)
	if err != nil {
		return "", err
	}
	var h struct {
		Contents json.RawMessage `json:"contents"`
	}
	if err := call(ctx, t.proc, "textDocument/hover", &protocol.HoverParams{TextDocumentPositionParams: t.params()}, &h); err != nil {
		return "", err
	}
	return hoverText(h.Contents), nil
}

// hoverText flattens MarkupContent | MarkedString | MarkedString[] and
// drops Markdown code fences.
func hoverText(raw json.RawMessage) string {
	var parts []string
	var one struct {
		Value string `json:"value"`
	}
	var str string
	var many []json.RawMessage
	switch {
	case json.Unmarshal(raw, &str) == nil:
		parts = append(parts, str)
	case json.Unmarshal(raw, &many) == nil:
		for _, r := range many {
			parts = append(parts, hoverText(r))
		}
	case json.Unmarshal(raw, &one) == nil:
		parts = append(parts, one.Value)
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.Join(parts, "\n\n"), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	s := strings.TrimSpace(b.String())
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}

// DocumentSymbols returns the outline of a file, depth first.
func (m *Manager) DocumentSymbols(ctx context.Context, path string) ([]Symbol, error) {
	ctx, cancel := context.WithTimeout(ctx, m.queryWait())
	defer cancel()
	s, p, text, err := m.open(ctx, path)
	if err != nil {
		return nil, err
	}
	return m.documentSymbols(ctx, s, p, canonical(path), text)
}

func (m *Manager) documentSymbols(ctx context.Context, s *server, p *proc, path string, text []byte) ([]Symbol, error) {
	var raw []json.RawMessage
	params := &protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: fileURI(path)}}
	if err := call(ctx, p, "textDocument/documentSymbol", params, &raw); err != nil {
		return nil, err
	}
	files := fileCache{ctx: ctx, s: s, texts: map[string][]byte{path: text}}
	var out []Symbol
	var walk func(raw json.RawMessage, depth int)
	walk = func(raw json.RawMessage, depth int) {
		var ds struct {
			Name           string             `json:"name"`
			Detail         string             `json:"detail"`
			Kind           int                `json:"kind"`
			SelectionRange *protocol.Range    `json:"selectionRange"`
			Location       *protocol.Location `json:"location"`
			Children       []json.RawMessage  `json:"children"`
		}
		if json.Unmarshal(raw, &ds) != nil {
			return
		}
		sym := Symbol{Name: ds.Name, Kind: kindName(ds.Kind), Detail: ds.Detail, Depth: depth}
		switch {
		case ds.SelectionRange != nil:
			sym.Location = files.location(path, ds.SelectionRange.Start)
		case ds.Location != nil:
			sym.Location = files.location(s.pathOf(ds.Location.URI), ds.Location.Range.Start)
		default:
			return
		}
		out = append(out, sym)
		for _, c := range ds.Children {
			walk(c, depth+1)
		}
	}
	for _, r := range raw {
		walk(r, 0)
	}
	return out, nil
}

// WorkspaceSymbols searches the symbols of the servers for dir (every
// server when dir is "": those started so far, else those Warm would
// start for dir).
func (m *Manager) WorkspaceSymbols(ctx context.Context, dir, query string) ([]Symbol, error) {
	ctx, cancel := context.WithTimeout(ctx, m.queryWait())
	defer cancel()
	servers, err := m.serversFor(dir)
	if err != nil {
		return nil, err
	}
	var out []Symbol
	var errs []error
	for _, s := range servers {
		p, err := s.ready(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var syms []struct {
			Name          string            `json:"name"`
			Kind          int               `json:"kind"`
			ContainerName string            `json:"containerName"`
			Location      protocol.Location `json:"location"`
		}
		if err := call(ctx, p, "workspace/symbol", &protocol.WorkspaceSymbolParams{Query: query}, &syms); err != nil {
			errs = append(errs, err)
			continue
		}
		files := fileCache{ctx: ctx, s: s}
		for _, sy := range syms {
			path := s.pathOf(sy.Location.URI)
			if path == "" || (dir != "" && !within(canonical(dir), path)) {
				continue
			}
			out = append(out, Symbol{Name: sy.Name, Kind: kindName(sy.Kind), Detail: sy.ContainerName, Location: files.location(path, sy.Location.Range.Start)})
		}
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// serversFor returns the servers covering dir, starting those Warm would.
func (m *Manager) serversFor(dir string) ([]*server, error) {
	if dir == "" {
		m.mu.Lock()
		dir = m.workspace
		m.mu.Unlock()
	}
	if dir != "" {
		dir = canonical(dir)
		for _, f := range sampleFiles(context.Background(), dir, m.langs) {
			m.serverFor(f, true)
		}
	}
	var out []*server
	for _, s := range m.running() {
		if dir == "" || within(dir, s.root) || within(s.root, dir) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no source file of %s found in %s", ErrNoServer, strings.Join(m.Languages(), " or "), relTo(m.base, dir))
	}
	return out, nil
}

func kindName(k int) string {
	names := []string{"", "file", "module", "namespace", "package", "class", "method", "property", "field",
		"constructor", "enum", "interface", "function", "variable", "constant", "string", "number", "boolean",
		"array", "object", "key", "null", "enum member", "struct", "event", "operator", "type parameter"}
	if k > 0 && k < len(names) {
		return names[k]
	}
	return "symbol"
}
