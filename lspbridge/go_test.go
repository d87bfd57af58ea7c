package lspbridge

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
)

// wantAll fails unless got contains every piece, and none of the absent.
func wantAll(t *testing.T, got string, present []string, absent []string) {
	t.Helper()
	for _, p := range present {
		if !strings.Contains(got, p) {
			t.Errorf("missing %q in:\n%s", p, got)
		}
	}
	for _, a := range absent {
		if strings.Contains(got, a) {
			t.Errorf("unexpected %q in:\n%s", a, got)
		}
	}
}

func TestGoTypeError(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "gopls")
	dir := fixture(t, "go/typeerr")
	m := newTestManager(t, dir)
	got := edit(t, m, filepath.Join(dir, "main.go"), "return n * 2", `return "twice"`)
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"gopls: this edit introduced 1 error:", `main.go:6:9: cannot use "twice"`}, []string{"already there", "fixed"})
}

func TestGoCrossPackage(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "gopls")
	dir := fixture(t, "go/crosspkg")
	m := newTestManager(t, dir)
	got := edit(t, m, filepath.Join(dir, "a", "a.go"), "func Scale(n int) int {", "func Scale(n, m int) int {")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"introduced 1 error:", "b/b.go:8:18: not enough arguments in call to a.Scale"}, []string{"a/a.go:"})
}

func TestGoPreexisting(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "gopls")
	dir := fixture(t, "go/preexisting")
	m := newTestManager(t, dir)
	got := edit(t, m, filepath.Join(dir, "broken.go"), "// Two returns two.", "// Two returns two.\n// It is broken on purpose.")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"gopls: no new errors", "3 problems were already there (not from this edit)"}, []string{"broken.go:", "fixed", "introduced"})
}

func TestGoFix(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "gopls")
	dir := fixture(t, "go/fix")
	m := newTestManager(t, dir)
	got := edit(t, m, filepath.Join(dir, "fix.go"), "n / twoo", "n / two")
	t.Logf("after edit:\n%s", got)
	wantAll(t, got, []string{"gopls: no problems", "fixed: 1"}, []string{"already there", "introduced"})
}

// TestGoNewFile: a file created by the edit has no "before"; its errors
// are new.
func TestGoNewFile(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "gopls")
	dir := fixture(t, "go/typeerr")
	m := newTestManager(t, dir)
	path := filepath.Join(dir, "extra.go")
	ctx := context.Background()
	snap := m.Before(ctx, path)
	content := []byte("package main\n\nfunc triple(n int) int {\n\treturn double(n) + \"n\"\n}\n")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	got := m.After(ctx, snap, content)
	t.Logf("after write:\n%s", got)
	wantAll(t, got, []string{"introduced 1 error:", "extra.go:4:9:"}, []string{"already there"})
}
