package lspbridge

import (
	"strings"
	"testing"

	"go.lsp.dev/protocol"
)

func TestLineMap(t *testing.T) {
	old := "a\nb\nc\nd\ne\n"
	tests := []struct {
		name, new string
		want      map[int]int // old line -> new line; -1 unmapped
	}{
		{"same", old, map[int]int{1: 1, 5: 5}},
		{"insert two lines", "a\nb\nx\ny\nc\nd\ne\n", map[int]int{1: 1, 2: 2, 3: 5, 5: 7}},
		{"delete one line", "a\nc\nd\ne\n", map[int]int{1: 1, 2: -1, 3: 2, 5: 4}},
		{"change middle", "a\nb\nC\nd\ne\n", map[int]int{2: 2, 3: -1, 4: 4}},
		{"append", old + "f\n", map[int]int{1: 1, 5: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lm := newLineMap([]byte(old), []byte(tt.new))
			for o, want := range tt.want {
				got, ok := lm.newLine(o)
				if !ok {
					got = -1
				}
				if got != want {
					t.Errorf("line %d -> %d, want %d", o, got, want)
				}
			}
		})
	}
}

func d(path string, line int, sev Severity, msg string) Diagnostic {
	return Diagnostic{Path: path, Line: line, Column: 1, Severity: sev, Source: "compiler", Message: msg}
}

func TestComputeDelta(t *testing.T) {
	const f, g = "/w/f.go", "/w/g.go"
	oldText := "1\n2\n3\n4\n5\n6\n"
	tests := []struct {
		name          string
		newText       string
		before, after []Diagnostic
		added         []string
		fixed, exists int
	}{
		{
			name:    "lines shifted by an insertion above",
			newText: "1\nx\ny\n2\n3\n4\n5\n6\n",
			before:  []Diagnostic{d(f, 4, SeverityError, "undefined: a"), d(f, 5, SeverityError, "undefined: b"), d(f, 6, SeverityWarning, "unused")},
			after:   []Diagnostic{d(f, 6, SeverityError, "undefined: a"), d(f, 7, SeverityError, "undefined: b"), d(f, 8, SeverityWarning, "unused")},
			exists:  3,
		},
		{
			name:    "same message elsewhere is new",
			newText: "1\n2\n3\n4\n5\nz\n6\n",
			before:  []Diagnostic{d(f, 2, SeverityError, "undefined: a")},
			after:   []Diagnostic{d(f, 2, SeverityError, "undefined: a"), d(f, 6, SeverityError, "undefined: a")},
			added:   []string{"f.go:6 undefined: a"},
			exists:  1,
		},
		{
			name:    "edited line keeps its problem",
			newText: "1\n2\nthree\n4\n5\n6\n",
			before:  []Diagnostic{d(f, 3, SeverityError, "undefined: a")},
			after:   []Diagnostic{d(f, 3, SeverityError, "undefined: a")},
			exists:  1,
		},
		{
			name:    "fixed and other file broken",
			newText: "1\n2\nfixed\n4\n5\n6\n",
			before:  []Diagnostic{d(f, 3, SeverityError, "undefined: a"), d(g, 9, SeverityError, "old in g")},
			after:   []Diagnostic{d(g, 9, SeverityError, "old in g"), d(g, 12, SeverityError, "new in g")},
			added:   []string{"g.go:12 new in g"},
			fixed:   1,
		},
		{
			name:    "information and hints are ignored",
			newText: oldText,
			before:  []Diagnostic{d(f, 1, SeverityHint, "hint")},
			after:   []Diagnostic{d(f, 2, SeverityInfo, "info")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			group := func(ds []Diagnostic) map[string][]Diagnostic {
				m := map[string][]Diagnostic{}
				for _, x := range ds {
					m[x.Path] = append(m[x.Path], x)
				}
				return m
			}
			dl := computeDelta(group(tt.before), group(tt.after), map[string]lineMap{f: newLineMap([]byte(oldText), []byte(tt.newText))})
			var added []string
			for _, a := range dl.added {
				added = append(added, relTo("/w", a.Path)+":"+itoa(a.Line)+" "+a.Message)
			}
			if strings.Join(added, "|") != strings.Join(tt.added, "|") || dl.fixed != tt.fixed || dl.existing != tt.exists {
				t.Errorf("added %v fixed %d existing %d; want %v %d %d", added, dl.fixed, dl.existing, tt.added, tt.fixed, tt.exists)
			}
		})
	}
}

func TestRender(t *testing.T) {
	errs := func(path string, n int) []Diagnostic {
		var out []Diagnostic
		for i := 1; i <= n; i++ {
			out = append(out, d(path, i, SeverityError, "bad\n\thave x\n\twant y"))
		}
		return out
	}
	tests := []struct {
		name string
		r    report
		want string
	}{
		{"clean", report{complete: true, baseOK: true}, "gopls: no problems"},
		{"fixed with old problems", report{complete: true, baseOK: true, delta: delta{fixed: 1, existing: 1}},
			"gopls: no new errors\nfixed: 1\n1 problem was already there (not from this edit)"},
		{"incomplete never clean", report{complete: false, baseOK: true, elapsed: 3000, why: "gopls did not answer in time"},
			"gopls: diagnostics incomplete after 3000 ms (gopls did not answer in time) — problems may exist that are not shown"},
		{"bounded lists", report{complete: true, baseOK: true, edited: []string{"/w/a.go"}, maxTotal: 3, maxFile: 2,
			delta: delta{added: append(append(errs("/w/b.go", 3), errs("/w/a.go", 2)...), d("/w/a.go", 9, SeverityWarning, "unused x"), d("/w/b.go", 9, SeverityWarning, "not shown"))}},
			`gopls: this edit introduced 5 errors:
  a.go:1:1: bad; have x; want y
  a.go:2:1: bad; have x; want y
  b.go:1:1: bad; have x; want y
  … and 2 more in b.go
new warning:
  a.go:9:1: unused x`},
		{"notice first", report{complete: true, baseOK: true, notices: []string{"gopls stopped (signal: killed) and was restarted"}},
			"note: gopls stopped (signal: killed) and was restarted\ngopls: no problems"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.server, tt.r.base = "gopls", "/w"
			if tt.r.maxTotal == 0 {
				tt.r.maxTotal, tt.r.maxFile = 10, 2
			}
			if got := tt.r.render(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestPositions(t *testing.T) {
	text := []byte("package p\n\nvar s = \"𐐀é\" + Name\n")
	off := strings.Index(string(text), "Name")
	p := positionOf(text, off)
	// 𐐀 is two UTF-16 units, é one: "var s = \"" is 9, then 2+1, "\" + " 4.
	if p != (protocol.Position{Line: 2, Character: 16}) {
		t.Fatalf("positionOf = %+v", p)
	}
	if got := offsetOf(text, p); got != off {
		t.Errorf("offsetOf = %d, want %d", got, off)
	}
	if c := column(text, off); c != 16 {
		t.Errorf("column = %d, want 16 (characters)", c)
	}
	if o, ok := charOffset(text, 3, 16); !ok || o != off {
		t.Errorf("charOffset = %d %v", o, ok)
	}
	if hits := findWord([]byte("Name Names xName Name"), "Name", 0, 21); len(hits) != 2 || hits[1] != 17 {
		t.Errorf("findWord = %v", hits)
	}
}

func TestApplyTextEdits(t *testing.T) {
	text := []byte("a := Hello()\nb := Hello()\n")
	edits := []protocol.TextEdit{
		{Range: protocol.Range{Start: protocol.Position{Line: 1, Character: 5}, End: protocol.Position{Line: 1, Character: 10}}, NewText: "Greet"},
		{Range: protocol.Range{Start: protocol.Position{Line: 0, Character: 5}, End: protocol.Position{Line: 0, Character: 10}}, NewText: "Greet"},
	}
	got, err := applyTextEdits(text, edits)
	if err != nil || string(got) != "a := Greet()\nb := Greet()\n" {
		t.Errorf("got %q %v", got, err)
	}
	if _, err := applyTextEdits(text, append(edits, edits[0])); err == nil {
		t.Error("overlapping edits accepted")
	}
}

func TestFindRoot(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) {
		full := dir + "/" + p
		if err := mkfile(full); err != nil {
			t.Fatal(err)
		}
	}
	mk("go.work")
	mk("mod/go.mod")
	mk("mod/pkg/x.go")
	if got := findRoot(dir+"/mod/pkg/x.go", []string{"go.work", "go.mod"}, ""); got != dir {
		t.Errorf("go.work should win over a nearer go.mod: %s", got)
	}
	if got := findRoot(dir+"/mod/pkg/x.go", []string{"go.mod"}, ""); got != dir+"/mod" {
		t.Errorf("root = %s", got)
	}
	if got := findRoot(dir+"/mod/pkg/x.go", []string{"nothing.here"}, dir+"/mod"); got != dir+"/mod" {
		t.Errorf("fallback root = %s", got)
	}
}

func TestConfiguration(t *testing.T) {
	s := &server{settings: map[string]any{"python": map[string]any{"pythonPath": "/v/bin/python", "analysis": map[string]any{"diagnosticMode": "openFilesOnly"}}}}
	got := s.configuration([]byte(`{"items":[{"section":"python"},{"section":"python.analysis"},{"section":"pyright"},{}]}`))
	if len(got) != 4 {
		t.Fatalf("got %d items", len(got))
	}
	if m, _ := got[1].(map[string]any); m["diagnosticMode"] != "openFilesOnly" {
		t.Errorf("python.analysis = %v", got[1])
	}
	if m, ok := got[2].(map[string]any); !ok || len(m) != 0 {
		t.Errorf("a missing section must be an empty object, got %v", got[2])
	}
}
