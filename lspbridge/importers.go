package lspbridge

import (
	"github.com/mm-agent/mm/fileedit/disk"

	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// A server that reports the problems of open files only (pyright in its
// default mode, typescript-language-server) cannot see that an edit broke
// another file. Before an edit, mm therefore opens the files that import
// the edited ones — found by a cheap scan of their import lines — for the
// length of the check, takes their diagnostics before and after like the
// edited file's, and closes them again.

// maxImporters bounds the files opened for one check: opening more costs
// the server more than the wait bound allows on a small machine.
const maxImporters = 20

// maxSourceRead bounds the files the scan reads: a huge generated file
// imports nothing worth opening.
const maxSourceRead = 1 << 20

// readSource returns the text of a file the scan looks at. The scan reads
// the disk, not Config.Files: it looks at every file of the root, and
// asking the editor for each would cost a round trip per file; the few
// files it finds are opened with their text from Config.Files. A link to
// /dev/zero, a FIFO or a link out of the root is skipped, unread.
func readSource(ctx context.Context, root, path string) ([]byte, error) {
	return disk.Read(ctx, root, path, maxSourceRead)
}

// importerScan is what the scan found: the files to check, nearest first,
// at most maxImporters, and how many it found in all.
type importerScan struct {
	files     []string
	found     int
	truncated bool // the walk stopped at maxScan entries
	// cut: the walk stopped because its time ran out (the edit's bound
	// on a busy machine), so importers may be missing; a background check
	// scans again before it trusts the list.
	cut bool
}

// findImporters scans s's root for the files of its language that import
// one of edited. The edited files themselves are never among them.
func (s *server) findImporters(ctx context.Context, edited []string) importerScan {
	// A file's imports are read once per version of it (importCache); match
	// tells whether they name an edited file.
	var extract func([]byte) []string
	var match func(path string, names []string) bool
	if s.lang == "python" {
		targets := make([][]string, 0, len(edited))
		for _, e := range edited {
			targets = append(targets, pyModule(s.root, e))
		}
		extract = pyImportedNames
		match = func(path string, names []string) bool { return pyNamesAny(s.root, path, names, targets) }
	} else {
		stems := make([]string, 0, len(edited))
		for _, e := range edited {
			stems = append(stems, strings.TrimSuffix(filepath.Base(e), filepath.Ext(e)))
		}
		extract = importLines
		match = func(_ string, lines []string) bool { return mentionsAny(lines, stems) }
	}
	exts := map[string]bool{}
	for _, e := range s.cfg.Extensions {
		exts[e] = true
	}
	if s.beforeScan != nil {
		s.beforeScan(ctx)
	}
	var sc importerScan
	n := 0
	_ = filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return filepath.SkipAll
		}
		if n >= maxScan {
			sc.truncated = true
			return filepath.SkipAll
		}
		if err != nil {
			return filepath.SkipDir
		}
		n++
		name := d.Name()
		if d.IsDir() {
			if p != s.root && skipDir(name) {
				return filepath.SkipDir
			}
			return nil
		}
		if !exts[filepath.Ext(name)] || slices.Contains(edited, p) {
			return nil
		}
		if names, ok := s.imports.get(ctx, s.root, p, d, extract); ok && match(p, names) {
			sc.files = append(sc.files, p)
		}
		return nil
	})
	// A read cut by ctx reads as "no import": the whole scan is in doubt.
	sc.cut = ctx.Err() != nil
	sc.found = len(sc.files)
	slices.SortStableFunc(sc.files, func(a, b string) int {
		return cmp.Or(cmp.Compare(distance(edited, a), distance(edited, b)), cmp.Compare(a, b))
	})
	if len(sc.files) > maxImporters {
		sc.files = sc.files[:maxImporters]
	}
	return sc
}

// skipDir names the directories no scan enters: hidden ones, dependencies,
// caches and virtual environments.
func skipDir(name string) bool {
	switch name {
	case "node_modules", "__pycache__", "vendor", "venv", "site-packages", "build", "dist", "target":
		return true
	}
	return strings.HasPrefix(name, ".")
}

// distance is how far path is from the nearest edited file, in directory
// steps: the importers next to the edit are the likeliest to matter.
func distance(edited []string, path string) int {
	best := -1
	for _, e := range edited {
		r, err := filepath.Rel(filepath.Dir(e), filepath.Dir(path))
		if err != nil {
			continue
		}
		d := 0
		if r != "." {
			d = strings.Count(r, string(filepath.Separator)) + 1
		}
		if best < 0 || d < best {
			best = d
		}
	}
	return best
}

// pyModule is the dotted module path of a Python file under root, as
// components: pkg/greet.py is [pkg greet], pkg/__init__.py is [pkg].
func pyModule(root, path string) []string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		rel = filepath.Base(path)
	}
	rel = strings.TrimSuffix(strings.TrimSuffix(rel, ".pyi"), ".py")
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) > 1 && parts[len(parts)-1] == "__init__" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// importCache keeps what each file of a root imports, by path, for as
// long as the file's size and modification time stay the same: an edit
// after the first then costs one stat per file, not one read. (A rewrite
// of the same size within one clock tick goes unseen until the next.)
type importCache struct {
	mu sync.Mutex
	m  map[string]importEntry
}

type importEntry struct {
	mod   time.Time
	size  int64
	names []string
}

// get returns the imports of path, read with extract when not cached.
func (c *importCache) get(ctx context.Context, root, path string, d fs.DirEntry, extract func([]byte) []string) ([]string, bool) {
	info, err := d.Info()
	if err != nil {
		return nil, false
	}
	c.mu.Lock()
	e, ok := c.m[path]
	c.mu.Unlock()
	if ok && e.mod.Equal(info.ModTime()) && e.size == info.Size() {
		return e.names, true
	}
	text, err := readSource(ctx, root, path)
	if err != nil {
		return nil, false
	}
	e = importEntry{mod: info.ModTime(), size: info.Size(), names: extract(text)}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]importEntry{}
	}
	c.m[path] = e
	c.mu.Unlock()
	return e.names, true
}

// pyImportsAny reports whether the Python source text of path imports one
// of targets. An imported name matches a target when it is the target's
// full dotted path or a tail of it (a src/ layout, a path added to
// sys.path): a few extra files checked cost little, a missed one costs a
// false "no problems". Relative imports are resolved against path's
// package.
func pyImportsAny(root, path string, text []byte, targets [][]string) bool {
	return pyNamesAny(root, path, pyImportedNames(text), targets)
}

// pyNamesAny is pyImportsAny for the names pyImportedNames found.
func pyNamesAny(root, path string, names []string, targets [][]string) bool {
	pkg := pyModule(root, filepath.Join(filepath.Dir(path), "__init__.py"))
	if filepath.Dir(path) == root {
		pkg = nil
	}
	for _, name := range names {
		comps := pyResolve(pkg, name)
		for _, t := range targets {
			if len(comps) > 0 && len(comps) <= len(t) && slices.Equal(comps, t[len(t)-len(comps):]) {
				return true
			}
		}
	}
	return false
}

// pyResolve turns an imported name into components, resolving the leading
// dots of a relative import against pkg.
func pyResolve(pkg []string, name string) []string {
	dots := len(name) - len(strings.TrimLeft(name, "."))
	rest := strings.Split(name[dots:], ".")
	if rest[0] == "" {
		rest = nil
	}
	if dots == 0 {
		return rest
	}
	up := dots - 1
	if up > len(pkg) {
		return rest
	}
	return append(slices.Clone(pkg[:len(pkg)-up]), rest...)
}

var (
	pyFrom   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^from\s+(\.*[\w.]*)\s+import\s+(.*)$`) })
	pyImport = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^import\s+(.*)$`) })
)

// pyImportedNames lists the modules the import statements of a Python
// source name: "from a.b import c, d" names a.b, a.b.c and a.b.d (c may be
// a submodule); "import a.b as x" names a.b. Statements continued over
// lines by parentheses or backslashes are joined first.
func pyImportedNames(text []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), maxSourceRead)
	for sc.Scan() {
		line := strings.TrimSpace(stripComment(sc.Text()))
		if !strings.HasPrefix(line, "from") && !strings.HasPrefix(line, "import") {
			continue
		}
		for (strings.Count(line, "(") > strings.Count(line, ")") || strings.HasSuffix(line, `\`)) && sc.Scan() {
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(stripComment(sc.Text()))
		}
		line = strings.NewReplacer("(", " ", ")", " ").Replace(line)
		if m := pyFrom().FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
			sep := "."
			if strings.HasSuffix(m[1], ".") {
				sep = ""
			}
			for _, n := range pyNames(m[2]) {
				if n != "*" {
					out = append(out, m[1]+sep+n)
				}
			}
		} else if m := pyImport().FindStringSubmatch(line); m != nil {
			out = append(out, pyNames(m[1])...)
		}
	}
	return out
}

// pyNames splits "a.b as x, c" into [a.b c].
func pyNames(list string) []string {
	var out []string
	for _, part := range strings.Split(list, ",") {
		if f := strings.Fields(part); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

func stripComment(line string) string {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		return line[:i]
	}
	return line
}

// importWords are the words that start an import in the languages mm has
// no scan of its own for (import, require, #include, use, from … import).
var importWords = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(import|require|include|use|from)\b`) })

// mentionsImport is the scan for any other language: a line with an
// import word and the edited file's name without its extension as a word.
func mentionsImport(text []byte, stems []string) bool {
	return mentionsAny(importLines(text), stems)
}

// importLines are the lines of text with an import word.
func importLines(text []byte) []string {
	var out []string
	for line := range bytes.Lines(text) {
		if importWords().Match(line) {
			out = append(out, string(line))
		}
	}
	return out
}

// mentionsAny reports whether one of the import lines names a stem.
func mentionsAny(lines []string, stems []string) bool {
	for _, line := range lines {
		for _, st := range stems {
			if st != "" && wordIn([]byte(line), st) {
				return true
			}
		}
	}
	return false
}

// wordIn reports whether w occurs in line not inside a longer identifier.
func wordIn(line []byte, w string) bool {
	for i := 0; ; {
		j := bytes.Index(line[i:], []byte(w))
		if j < 0 {
			return false
		}
		a, b := i+j, i+j+len(w)
		if (a == 0 || !isIdent(line[a-1])) && (b == len(line) || !isIdent(line[b])) {
			return true
		}
		i = a + 1
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// openImporters finds the files that import the group's edited files and
// opens those the server does not have open yet, with their text on disk,
// so that their diagnostics are part of the baseline. It returns what to
// wait for when the server does not answer pulls. Called by takeBase,
// after the edited files' old text is sent.
func (g *snapGroup) openImporters(ctx context.Context) []*pending {
	s := g.srv
	edited := make([]string, len(g.files))
	for i, f := range g.files {
		edited[i] = f.path
	}
	g.scan, g.scanned = s.findImporters(ctx, edited), true
	var ps []*pending
	checked := g.scan.files[:0]
	for _, p := range g.scan.files {
		if _, open := s.docText(p); open {
			checked = append(checked, p)
			if g.m.adopt(s, p) {
				// Opened by a check still going on: this one closes it.
				g.hold(p)
			}
			continue
		}
		text, err := s.files.ReadFile(ctx, p)
		if err != nil {
			continue // gone since the scan
		}
		checked = append(checked, p)
		g.hold(p)
		if pend, err := s.syncDoc(ctx, p, text); err == nil && s.pulls() != pullYes {
			ps = append(ps, pend)
		}
	}
	g.scan.files = checked
	return ps
}

// pullSupport is what mm learned of a server's textDocument/diagnostic.
type pullSupport int

const (
	pullUnknown pullSupport = iota
	pullYes
	pullNo
)

func (s *server) pulls() pullSupport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pull
}

// pull asks the server for the diagnostics (textDocument/diagnostic) of
// edited and of each checked importer. pyright answers a pull once the
// file is checked against all it has — even though mm does not advertise
// pulls, which would stop its pushes — where its pushes come in stages
// when several files are open (a first one with the syntax errors only)
// that no quiet period tells apart from the last. It returns nil when the
// server does not answer pulls; ok is false when ctx ended before every
// answer came.
func (g *snapGroup) pull(ctx context.Context, edited []string) (got map[string][]Diagnostic, ok bool) {
	s := g.srv
	if s.pulls() == pullNo {
		return nil, true
	}
	p, err := s.ready(ctx)
	if err != nil {
		return map[string][]Diagnostic{}, false
	}
	got = map[string][]Diagnostic{}
	for _, path := range append(slices.Clip(edited), g.scan.files...) {
		var res struct {
			Kind  string                `json:"kind"`
			Items []protocol.Diagnostic `json:"items"`
		}
		params := map[string]any{"textDocument": map[string]any{"uri": fileURI(path)}}
		err := call(ctx, p, "textDocument/diagnostic", params, &res)
		var rpcErr *jsonrpc2.Error
		switch {
		case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc2.MethodNotFound:
			s.mu.Lock()
			s.pull = pullNo
			s.mu.Unlock()
			return nil, true
		case err != nil:
			return got, false
		}
		s.mu.Lock()
		s.lastEvent = time.Now()
		s.mu.Unlock()
		list := make([]Diagnostic, 0, len(res.Items))
		for _, d := range res.Items {
			list = append(list, fromProtocol(path, d))
		}
		got[path] = list
	}
	s.mu.Lock()
	s.pull = pullYes
	s.mu.Unlock()
	return got, true
}

// recheckImporters, for a server that does not answer pulls, sends each
// importer's text again once the edit is synced, so that it publishes
// their diagnostics against the edit as a new version mm can wait for.
func (g *snapGroup) recheckImporters(ctx context.Context) []*pending {
	if g.basePulled != nil {
		return nil
	}
	var ps []*pending
	for _, p := range g.scan.files {
		text, open := g.srv.docText(p)
		if !open {
			continue
		}
		if pend, err := g.srv.recheckDoc(ctx, p, text); err == nil {
			ps = append(ps, pend)
		}
	}
	return ps
}

// withPulled makes the before/after pair of diagnostics compared, when
// the server answers pulls, the pulled ones of the checked files only —
// the pushes of other open files may still be in flux, since nothing
// waited for them: an edited file's on each side (the pushed one where a
// pull went unanswered), an importer's when both sides have them — one
// without both answers is left out of the comparison.
func (g *snapGroup) withPulled(pushedBefore, pushedAfter, pulled map[string][]Diagnostic) (before, after map[string][]Diagnostic) {
	if g.basePulled == nil {
		return pushedBefore, pushedAfter
	}
	before, after = map[string][]Diagnostic{}, map[string][]Diagnostic{}
	for _, f := range g.files {
		before[f.path] = pushedBefore[f.path]
		if b, ok := g.basePulled[f.path]; ok {
			before[f.path] = b
		}
		after[f.path] = pushedAfter[f.path]
		if a, ok := pulled[f.path]; ok {
			after[f.path] = a
		}
	}
	for _, p := range g.scan.files {
		b, okB := g.basePulled[p]
		a, okA := pulled[p]
		if okB && okA {
			before[p], after[p] = b, a
		}
	}
	return before, after
}

// closeOpened closes the importers mm opened for the check: the server
// is left with the documents it had.
func (g *snapGroup) closeOpened() {
	g.openMu.Lock()
	opened := g.opened
	g.opened = nil
	g.openMu.Unlock()
	if len(opened) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	for _, p := range opened {
		g.srv.closeDoc(ctx, p)
	}
}

// hold records a document the group closes when its check ends.
func (g *snapGroup) hold(path string) {
	g.openMu.Lock()
	defer g.openMu.Unlock()
	g.opened = append(g.opened, path)
}

// keepOpen takes path out of the documents the group closes, and
// reports whether it was among them.
func (g *snapGroup) keepOpen(path string) bool {
	g.openMu.Lock()
	defer g.openMu.Unlock()
	n := len(g.opened)
	g.opened = slices.DeleteFunc(g.opened, func(p string) bool { return p == path })
	return len(g.opened) < n
}

// docText returns mm's copy of a document it has open.
func (s *server) docText(path string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.docs[path]; d != nil {
		if d.current != nil {
			return d.current, true
		}
		return d.text, true
	}
	return nil, false
}

// setCurrent records text as the file's while the server holds an older
// one (document.current); nil ends it.
func (s *server) setCurrent(path string, text []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.docs[path]; d != nil {
		d.current = text
	}
}

// settled reports whether the diagnostics of ps are all in.
func (s *server) settled(ps []*pending) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	done, _ := s.settledLocked(ps)
	return done
}
