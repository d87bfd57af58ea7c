package lspbridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoDefinitionByName(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "go/query")
	ctx := context.Background()
	locs, err := m.Definition(ctx, Position{Path: filepath.Join(dir, "main.go"), Symbol: "greet.Hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) != 1 || locs[0].Path != filepath.Join(dir, "greet", "greet.go") || locs[0].Line != 5 || locs[0].Column != 6 {
		t.Fatalf("definition = %+v, want greet/greet.go:5:6", locs)
	}
	if locs[0].Text != "func Hello(name string) string {" {
		t.Errorf("text = %q", locs[0].Text)
	}
	// Without a file: found through workspace symbols.
	locs, err = m.Definition(ctx, Position{Symbol: "Hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(locs) != 1 || locs[0].Line != 5 {
		t.Fatalf("definition without path = %+v", locs)
	}
}

func TestGoReferencesByName(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "go/query")
	locs, err := m.References(context.Background(), Position{Path: filepath.Join(dir, "greet", "greet.go"), Symbol: "Hello"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range locs {
		got = append(got, relTo(dir, l.Path)+":"+itoa(l.Line)+":"+itoa(l.Column))
	}
	want := "main.go:10:20 main.go:11:20"
	if strings.Join(got, " ") != want {
		t.Errorf("references = %v, want %s", got, want)
	}
}

func TestGoHover(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "go/query")
	h, err := m.Hover(context.Background(), Position{Path: filepath.Join(dir, "main.go"), Symbol: "Hello", Line: 11})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("hover:\n%s", h)
	if !strings.Contains(h, "func greet.Hello(name string) string") && !strings.Contains(h, "func Hello(name string) string") || !strings.Contains(h, "Hello returns a greeting for name.") {
		t.Errorf("hover = %q", h)
	}
	if strings.Contains(h, "```") {
		t.Errorf("hover keeps code fences: %q", h)
	}
}

func TestGoSymbols(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "go/query")
	syms, err := m.DocumentSymbols(context.Background(), filepath.Join(dir, "greet", "greet.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 1 || syms[0].Name != "Hello" || syms[0].Kind != "function" || syms[0].Line != 5 {
		t.Errorf("symbols = %+v", syms)
	}
	ws, err := m.WorkspaceSymbols(context.Background(), dir, "Hello")
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) == 0 || ws[0].Path != filepath.Join(dir, "greet", "greet.go") {
		t.Errorf("workspace symbols = %+v", ws)
	}
}

func TestGoRenameAcrossFiles(t *testing.T) {
	t.Parallel()
	dir, m, changes := renameHello(t)
	ctx := context.Background()
	if len(changes) != 2 {
		t.Fatalf("rename touches %d files, want 2", len(changes))
	}
	var written []string
	report, err := m.Apply(ctx, changes, func(path string, _, data []byte) error {
		written = append(written, relTo(dir, path))
		return writeAtomic(path, data)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after rename:\n%s", report)
	if strings.Join(written, " ") != "greet/greet.go main.go" {
		t.Errorf("written = %v", written)
	}
	main, _ := os.ReadFile(filepath.Join(dir, "main.go"))
	if strings.Count(string(main), "greet.Greet(") != 2 || strings.Contains(string(main), "Hello") {
		t.Errorf("main.go after rename:\n%s", main)
	}
	if report != "gopls: no problems" {
		t.Errorf("report = %q", report)
	}
}

func TestRenameAllOrNothing(t *testing.T) {
	t.Parallel()
	_, m, changes := renameHello(t)
	ctx := context.Background()
	before := map[string][]byte{}
	for _, c := range changes {
		before[c.Path] = c.Old
	}
	n := 0
	_, err := m.Apply(ctx, changes, func(path string, _, data []byte) error {
		n++
		if n == 2 {
			return os.ErrPermission
		}
		return writeAtomic(path, data)
	})
	if err == nil {
		t.Fatal("Apply succeeded with a failing write")
	}
	for p, old := range before {
		if cur, _ := os.ReadFile(p); string(cur) != string(old) {
			t.Errorf("%s not restored:\n%s", p, cur)
		}
	}
}

// renameHello is the rename of greet.Hello to Greet in the go/query
// fixture, not applied yet.
func renameHello(t *testing.T) (string, *Manager, []FileChange) {
	t.Helper()
	dir, m := served(t, "go/query")
	changes, err := m.Rename(context.Background(), Position{Path: filepath.Join(dir, "greet", "greet.go"), Symbol: "Hello"}, "Greet")
	if err != nil {
		t.Fatal(err)
	}
	return dir, m, changes
}

// writeAtomic stands in for fileedit's writer.
func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// TestGoQualifiedMethod: "Client.Start" picks the method of Client, in a
// file and in the workspace.
func TestGoQualifiedMethod(t *testing.T) {
	t.Parallel()
	dir, m := served(t, "go/query")
	ctx := context.Background()
	for _, pos := range []Position{
		{Path: filepath.Join(dir, "greet", "server.go"), Symbol: "Client.Start"},
		{Symbol: "Client.Start"},
	} {
		locs, err := m.Definition(ctx, pos)
		if err != nil {
			t.Fatal(err)
		}
		if len(locs) != 1 || locs[0].Line != 13 {
			t.Errorf("%+v: definition = %+v, want line 13", pos, locs)
		}
	}
}
