package disk

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
)

// entries lists a directory, to prove no temporary file is left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteAtomicKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o754); err != nil { // beat the umask
		t.Fatal(err)
	}
	if err := WriteAtomic("", p, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o754 {
		t.Errorf("mode = %v, want 0754 kept", fi.Mode().Perm())
	}
	if got, _ := os.ReadFile(p); string(got) != "#!/bin/sh\necho hi\n" {
		t.Errorf("content = %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %v, want only run.sh", names)
	}
}

func TestWriteAtomicNewFileInNewDirs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "b", "new.txt")
	if err := WriteAtomic("", p, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want perm 0600", fi.Mode().Perm())
	}
	if names := entries(t, filepath.Dir(p)); len(names) != 1 {
		t.Errorf("directory holds %v", names)
	}
}

func TestWriteAtomicThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.txt")
	link := filepath.Join(dir, "link.txt")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := WriteAtomic("", link, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a file (%v)", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new\n" {
		t.Errorf("target = %q", got)
	}
}

// TestWriteAtomicFailureKeepsOriginal makes the write fail in the ways a
// real workspace does and checks the original file is byte-identical and
// no temporary file remains.
func TestWriteAtomicFailureKeepsOriginal(t *testing.T) {
	original := []byte("keep me\r\nexactly\r\n")
	t.Run("read-only directory", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f.txt")
		if err := os.WriteFile(p, original, 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.ReadOnlyDir(t, dir)
		err := WriteAtomic("", p, []byte("changed"), 0o644)
		if err == nil {
			t.Fatal("write into a read-only directory succeeded")
		}
		if !strings.Contains(err.Error(), "f.txt") {
			t.Errorf("error does not name the file: %v", err)
		}
		assertUntouched(t, dir, p, original, 1)
	})
	t.Run("parent is a file", func(t *testing.T) {
		dir := t.TempDir()
		parent := filepath.Join(dir, "notadir")
		if err := os.WriteFile(parent, original, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := WriteAtomic("", filepath.Join(parent, "f.txt"), []byte("x"), 0o644); err == nil {
			t.Fatal("write under a file succeeded")
		}
		assertUntouched(t, dir, parent, original, 1)
	})
	t.Run("path is a directory", func(t *testing.T) {
		dir := t.TempDir()
		sub := filepath.Join(dir, "sub")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteAtomic("", sub, []byte("x"), 0o644); err == nil {
			t.Fatal("write over a directory succeeded")
		}
		if names := entries(t, dir); len(names) != 1 {
			t.Errorf("directory holds %v", names)
		}
	})
}

// TestWriteAtomicLateFailureCleansUp fails the steps that come after the
// temporary file exists (a short write on a full disk, a refused rename)
// and checks the original is intact and the temporary file gone.
func TestWriteAtomicLateFailureCleansUp(t *testing.T) {
	original := []byte("original\n")
	fail := errors.New("injected failure")
	cases := map[string]fileOps{
		"write":  {write: func(*os.File, []byte) (int, error) { return 0, fail }, rename: (*os.Root).Rename},
		"rename": {write: (*os.File).Write, rename: func(*os.Root, string, string) error { return fail }},
	}
	for name, ops := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(p, original, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := writeAtomic(dir, p, []byte("changed\n"), 0o644, ops, nil); !errors.Is(err, fail) {
				t.Fatalf("err = %v, want the injected failure", err)
			}
			assertUntouched(t, dir, p, original, 1)
		})
	}
}

func assertUntouched(t *testing.T, dir, p string, want []byte, n int) {
	t.Helper()
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("original changed: %q", got)
	}
	if names := entries(t, dir); len(names) != n {
		t.Errorf("directory holds %v, want %d entries (no temp file)", names, n)
	}
}
