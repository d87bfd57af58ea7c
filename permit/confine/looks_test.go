package confine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkLooks is what a confined command's looks at the workspace
// cost — Prepare's, with git's answer for the hooks directory beside it,
// and Finish's — in a git repository of about 1,000 files, the size of
// mm's own. Nothing is started: the command and its helper are
// BenchmarkCommandStart's (cmd/mm), in a small workspace.
func BenchmarkLooks(b *testing.B) {
	ws := repository(b, 100, 10)
	ctx := context.Background()
	for _, mech := range []Mechanism{Namespaces, Landlock} {
		b.Run(string(mech), func(b *testing.B) {
			s := &Sandbox{opts: Options{Environ: os.Environ()}, mech: mech, tmp: b.TempDir()}
			c := Command{Roots: []string{ws}, Dir: ws}
			s.buildCaches(ctx) // looked up once per sandbox
			for b.Loop() {
				r, refusal := s.Prepare(ctx, c)
				if refusal != "" {
					b.Fatal(refusal)
				}
				if note := r.Finish(); note != "" {
					b.Fatal(note)
				}
			}
		})
	}
}

// repository is a git repository of dirs directories of files files
// each, with a few files that run later and the object store's fan-out
// directories of a repository that has history.
func repository(b *testing.B, dirs, files int) string {
	ws := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	write := func(rel string) {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for d := range dirs {
		for f := range files {
			write(fmt.Sprintf("pkg%03d/file%02d.go", d, f))
		}
	}
	for _, f := range []string{"go.mod", "README.md", ".gitattributes", ".vscode/settings.json", ".github/workflows/ci.yml"} {
		write(f)
	}
	for i := range 256 {
		if err := os.MkdirAll(filepath.Join(ws, ".git", "objects", fmt.Sprintf("%02x", i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}
