package trust

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A file is read again only when it changed: an editor reads the config
// at every session, and a hook's program may be large.
func TestCacheReadsAFileOncePerChange(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "hook.sh")
	os.WriteFile(p, []byte("one\n"), 0o644)
	var c Cache
	first, err := c.Hash([]string{p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := c.Hash([]string{p}, nil)
	if again != first || c.reads != 1 {
		t.Errorf("unchanged: hash %v, %d reads, want the same hash from 1 read", again == first, c.reads)
	}
	os.WriteFile(p, []byte("two\n"), 0o644)
	changed, _ := c.Hash([]string{p}, nil)
	if changed == first || c.reads != 2 {
		t.Errorf("changed: new hash %v, %d reads, want a new hash from a 2nd read", changed != first, c.reads)
	}
	if plain, _ := Hash([]string{p}, nil); plain != changed {
		t.Errorf("the cache changed the hash")
	}
}

// What trust would cover past the bounds is refused before it is read,
// and a directory counts as every file below it, links followed once.
func TestHashBoundsAndDirectories(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.bin")
	f, _ := os.Create(big)
	if err := f.Truncate(MaxBytes + 1); err != nil {
		t.Skip("no sparse files:", err)
	}
	f.Close()
	var c Cache
	if _, err := c.Hash([]string{big}, nil); !errors.Is(err, ErrTooLarge) || c.reads != 0 {
		t.Errorf("a file past the bound: %v after %d reads, want ErrTooLarge before any", err, c.reads)
	}
	pkg := filepath.Join(dir, "pkg")
	os.MkdirAll(filepath.Join(pkg, "sub"), 0o755)
	os.WriteFile(filepath.Join(pkg, "sub", "a.py"), []byte("a\n"), 0o644)
	os.Symlink(".", filepath.Join(pkg, "loop")) // a loop ends
	before, err := Hash([]string{pkg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pkg, "sub", "a.py"), []byte("b\n"), 0o644)
	if after, _ := Hash([]string{pkg}, nil); after == before {
		t.Errorf("a file below a directory part changed, the hash did not")
	}
}
