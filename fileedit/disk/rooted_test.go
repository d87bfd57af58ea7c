package disk

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// workspace makes a root with a sibling directory outside it.
func workspace(t *testing.T) (root, outsideDir string) {
	t.Helper()
	base := t.TempDir()
	root, outsideDir = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{root, outsideDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, outsideDir
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
}

// A directory swapped for a link out of the root after the path was
// checked (a permission prompt was open meanwhile) does not send the
// write outside: os.Root refuses at the moment of the write.
func TestWriteRefusesDirectorySwappedForLink(t *testing.T) {
	root, out := workspace(t)
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// …checked, prompt open; then the swap:
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	symlink(t, out, sub)
	err := WriteAtomic(root, filepath.Join(sub, "f.txt"), []byte("x"), 0o644)
	if !errors.Is(err, ErrOutside) {
		t.Fatalf("err = %v, want ErrOutside", err)
	}
	if names := entries(t, out); len(names) != 0 {
		t.Fatalf("written outside: %v", names)
	}
}

func TestWriteFinalLink(t *testing.T) {
	root, out := workspace(t)
	write(t, filepath.Join(root, "real.txt"), "old\n")
	write(t, filepath.Join(out, "secret.txt"), "secret\n")
	symlink(t, "real.txt", filepath.Join(root, "rel.txt"))
	symlink(t, filepath.Join(root, "real.txt"), filepath.Join(root, "abs.txt"))
	symlink(t, "../outside/new.txt", filepath.Join(root, "dangling.txt"))
	symlink(t, filepath.Join(out, "secret.txt"), filepath.Join(root, "escape.txt"))
	for _, name := range []string{"rel.txt", "abs.txt"} {
		if err := WriteAtomic(root, filepath.Join(root, name), []byte(name), 0o644); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, _ := os.ReadFile(filepath.Join(root, "real.txt")); string(got) != name {
			t.Errorf("%s: target holds %q, want the write through the link", name, got)
		}
		if fi, err := os.Lstat(filepath.Join(root, name)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced (%v)", name, err)
		}
	}
	for _, name := range []string{"dangling.txt", "escape.txt"} {
		if err := WriteAtomic(root, filepath.Join(root, name), []byte("pwned"), 0o644); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: err = %v, want ErrOutside", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "new.txt")); err == nil {
		t.Error("the dangling link created its target outside")
	}
	if got, _ := os.ReadFile(filepath.Join(out, "secret.txt")); string(got) != "secret\n" {
		t.Errorf("outside file changed: %q", got)
	}
	if err := WriteAtomic(root, filepath.Join(out, "x.txt"), nil, 0o644); !errors.Is(err, ErrOutside) {
		t.Errorf("a path outside the root: err = %v", err)
	}
}

func TestReadRefusesWhatIsNotARegularFile(t *testing.T) {
	root, out := workspace(t)
	ctx := context.Background()
	write(t, filepath.Join(out, "secret.txt"), "secret\n")
	write(t, filepath.Join(root, "a.py"), "print(1)\n")
	symlink(t, "/dev/zero", filepath.Join(root, "zero.py"))
	symlink(t, "../outside/secret.txt", filepath.Join(root, "escape.txt"))
	symlink(t, filepath.Join(root, "a.py"), filepath.Join(root, "abs.py"))
	fifo := filepath.Join(root, "x.py")
	if runtime.GOOS != "windows" {
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		root, path string
		want       error
	}{
		{root, filepath.Join(root, "zero.py"), ErrOutside},
		{"", filepath.Join(root, "zero.py"), ErrNotRegular},
		{"", "/dev/zero", ErrNotRegular},
		{root, fifo, ErrNotRegular},
		{"", fifo, ErrNotRegular},
		{root, filepath.Join(root, "escape.txt"), ErrOutside},
		{root, filepath.Join(root, "missing.py"), fs.ErrNotExist},
		{root, filepath.Join(out, "secret.txt"), ErrOutside},
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() { _, err := Read(ctx, c.root, c.path, MaxSource); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, c.want) {
				t.Errorf("Read(%q, %q) = %v, want %v", c.root, c.path, err, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Read(%q, %q) blocked", c.root, c.path)
		}
	}
	for _, p := range []string{"a.py", "abs.py"} {
		if got, err := Read(ctx, root, filepath.Join(root, p), MaxSource); err != nil || string(got) != "print(1)\n" {
			t.Errorf("%s: %q, %v", p, got, err)
		}
	}
}

// A 2 GB sparse file is refused by its size before a byte is loaded.
func TestReadHugeFileIsRefusedBySize(t *testing.T) {
	root, _ := workspace(t)
	p := filepath.Join(root, "huge.log")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	_, err = Read(context.Background(), root, p, MaxSource)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 2<<30 || tl.Limit != MaxSource {
		t.Fatalf("err = %v, want a TooLargeError of 2 GiB", err)
	}
	if want := "the file is 2.0 GiB, more than the 8.0 MiB mm reads"; !strings.Contains(err.Error(), want) {
		t.Errorf("err = %q, want it to say %q", err, want)
	}
}

func TestReadStopsWhenCancelled(t *testing.T) {
	root, _ := workspace(t)
	p := filepath.Join(root, "a.txt")
	write(t, p, "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, root, p, MaxSource); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// The check of a write sees where it lands — every link on the way
// followed inside the root, a dangling final one too — and a refusal
// creates nothing. A directory swapped for a link after the check (while
// the write is under way) does not move the write: it goes into the
// directory the walk held open.
func TestWriteAtomicCheckedSeesWhereItLands(t *testing.T) {
	root, _ := workspace(t)
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, ".git", filepath.Join(root, "cfg"))
	symlink(t, filepath.Join(root, ".git"), filepath.Join(root, "docs"))
	symlink(t, ".envrc", filepath.Join(root, "notes.txt"))
	refuse := errors.New("refused")
	for path, want := range map[string]string{
		"cfg/hooks/pre-commit": ".git/hooks/pre-commit",
		"docs/config":          ".git/config",
		"notes.txt":            ".envrc",
		"src/new/a.go":         "src/new/a.go",
	} {
		var got string
		err := WriteAtomicChecked(root, filepath.Join(root, path), []byte("x"), 0o644, func(p, real string) error {
			if p != filepath.Join(root, path) {
				t.Errorf("%s: check got path %q", path, p)
			}
			got = real
			return refuse
		})
		if !errors.Is(err, refuse) || got != filepath.Join(root, want) {
			t.Errorf("%s: err %v, check saw %q, want %q", path, err, got, want)
		}
	}
	for _, p := range []string{".git/hooks", ".git/config", ".envrc", "src"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			t.Errorf("a refused write created %s", p)
		}
	}

	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	err := WriteAtomicChecked(root, filepath.Join(sub, "f.txt"), []byte("mine"), 0o644, func(_, real string) error {
		if real != filepath.Join(sub, "f.txt") {
			t.Errorf("check saw %q", real)
		}
		// the swap, once the check has passed
		if err := os.Rename(sub, filepath.Join(root, "moved")); err != nil {
			t.Fatal(err)
		}
		symlink(t, ".git", sub)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(root, ".git", "f.txt")); err == nil {
		t.Error("the write followed a link swapped in after its check")
	}
	if got, _ := os.ReadFile(filepath.Join(root, "moved", "f.txt")); string(got) != "mine" {
		t.Errorf("the write did not land in the directory it checked: %q", got)
	}
}
