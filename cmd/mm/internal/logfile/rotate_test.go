package logfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// mm.log never grows past its bound: a long REPL session, or years of
// runs, keep at most the file and one rotated copy, each within max.
func TestLogFileIsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mm.log")
	if err := os.WriteFile(path, bytes.Repeat([]byte("old line\n"), 200), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := openRotating(path, 1000) // already past: rotated at open
	if err != nil {
		t.Fatal(err)
	}
	line := []byte("level=INFO msg=\"a log line of some length\"\n")
	for range 100 {
		if _, err := r.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1000 || fi.Size() == 0 {
			t.Errorf("%s holds %d bytes, want 1–1000", filepath.Base(p), fi.Size())
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600 (it may hold paths and prompts)", filepath.Base(p), fi.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Errorf("%d files in the state directory, want mm.log and mm.log.1", len(entries))
	}
}
