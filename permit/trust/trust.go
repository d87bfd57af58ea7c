// Package trust binds the user's trust of a workspace's own configuration
// to its content: the hash of every file that takes part, recorded in
// mm's state directory (never in the repository), so that any change
// makes the configuration untrusted again.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/mm-agent/mm/fileedit/disk"
)

// trustVersion begins every hash: when what a hash covers changes, the
// records made before stop matching and the user is asked once more.
const trustVersion = "mm trust 3\x00"

// Bounds of what trust covers: past them mm cannot bind trust to all of
// it, and says so rather than trusting a part. They hold for the files
// under .mm/ and for everything the trust covers together (a hook naming
// a 2 GiB file is refused at once, never read).
const (
	MaxFiles = 1000
	MaxBytes = 64 << 20
)

// ErrTooLarge says what trust would cover is past MaxFiles or MaxBytes.
var ErrTooLarge = fmt.Errorf("more than %d files or %d MiB", MaxFiles, MaxBytes>>20)

// Files lists every file under the workspace's .mm/ directory: a hook
// can source a lib.sh the config never names, and a change to it must
// end the trust too. mm keeps nothing of its own there (sessions and
// trust live in the state directory), so everything counts. A link is
// followed — into a directory too (.mm/lib -> ../lib): what a hook loads
// through it is what the trust covers — and listed under its name there.
func Files(dir string) ([]string, error) {
	root := filepath.Join(dir, ".mm")
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var w walker
	if err := w.walk(root); err != nil {
		return nil, fmt.Errorf("%s: %w: mm cannot bind trust to all of it — keep only mm's files there", root, err)
	}
	return w.files, nil
}

// walker lists files under directories, links followed, within the
// bounds, each real directory once (a link loop ends).
type walker struct {
	files []string
	size  int64
	seen  map[string]bool
}

func (w *walker) walk(p string) error {
	fi, err := os.Stat(p) // follows links
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			w.files = append(w.files, p) // a dangling link: hashed as missing
			return nil
		}
		return err
	}
	if !fi.IsDir() {
		w.files = append(w.files, p)
		if fi.Mode().IsRegular() {
			w.size += fi.Size()
		}
		if len(w.files) > MaxFiles || w.size > MaxBytes {
			return ErrTooLarge
		}
		return nil
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return err
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[real] {
		return nil
	}
	w.seen[real] = true
	entries, err := os.ReadDir(p)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := w.walk(filepath.Join(p, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// Cache keeps the digest of each file hashed, by its identity and times:
// a config is read again at every session an editor opens, and a file
// that did not change is not read again. The zero value is ready; a nil
// *Cache keeps nothing. Safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	digests map[string][32]byte
	reads   int // files read whole, for the tests
}

// Hash is the content hash of parts: each file's path, where it links to
// when it is a link, and its bytes (a missing file counts as missing), so
// changing, adding or removing any of them changes it. A part that is a
// directory counts as every file below it, links followed. known are bytes
// already read for a part (the config files as they were parsed): they
// are hashed instead of a second reading, so what is trusted is what was
// loaded, not what the disk holds a moment later. Past MaxFiles or
// MaxBytes in all it fails with ErrTooLarge, before reading.
func (c *Cache) Hash(parts []string, known map[string][]byte) (string, error) {
	var files []string
	var w walker
	for _, p := range parts {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			if err := w.walk(p); err != nil {
				return "", fmt.Errorf("%s: %w", p, err)
			}
			continue
		}
		files = append(files, p)
	}
	all := append(files, w.files...)
	var size int64
	for _, p := range all {
		if b, ok := known[p]; ok {
			size += int64(len(b))
		} else if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
	}
	if len(all) > MaxFiles || size > MaxBytes {
		return "", ErrTooLarge
	}
	h := sha256.New()
	io.WriteString(h, trustVersion)
	for _, p := range all {
		fmt.Fprintf(h, "%s\x00", p)
		if target, err := os.Readlink(p); err == nil {
			fmt.Fprintf(h, "link\x00%s\x00", target)
		}
		if b, ok := known[p]; ok {
			fmt.Fprintf(h, "%d\x00%x", len(b), sha256.Sum256(b))
			continue
		}
		d, err := c.digest(p)
		if err != nil {
			return "", fmt.Errorf("hash %s: %w", p, err)
		}
		h.Write([]byte(d))
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Hash is Cache.Hash without a cache.
func Hash(parts []string, known map[string][]byte) (string, error) {
	var c *Cache
	return c.Hash(parts, known)
}

// digest is what the hash takes of p: its size and the sha256 of its
// bytes, or "missing"/"not a file" for what has no bytes to hash.
func (c *Cache) digest(p string) (string, error) {
	// O_NONBLOCK: a FIFO planted under .mm/ would otherwise block the
	// open, and mm with it, until something writes to it.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "missing\x00", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "not a file\x00", nil
	}
	key := identity(p, fi)
	if c != nil && key != "" {
		c.mu.Lock()
		sum, ok := c.digests[key]
		c.mu.Unlock()
		if ok {
			return fmt.Sprintf("%d\x00%x", fi.Size(), sum), nil
		}
	}
	if c != nil {
		c.mu.Lock()
		c.reads++
		c.mu.Unlock()
	}
	fh := sha256.New()
	if n, err := io.Copy(fh, f); err != nil || n != fi.Size() {
		return "", fmt.Errorf("read %d of %d bytes: %v", n, fi.Size(), err)
	}
	var sum [32]byte
	copy(sum[:], fh.Sum(nil))
	if c != nil && key != "" {
		c.mu.Lock()
		if c.digests == nil {
			c.digests = map[string][32]byte{}
		}
		c.digests[key] = sum
		c.mu.Unlock()
	}
	return fmt.Sprintf("%d\x00%x", fi.Size(), sum), nil
}

// trustRecords is the trust file: the config file's absolute path → the
// hash of the contents the user trusted.
type trustRecords map[string]string

func readTrust(file string) trustRecords {
	recs := trustRecords{}
	if file == "" {
		return recs
	}
	if b, err := os.ReadFile(file); err == nil {
		_ = json.Unmarshal(b, &recs)
	}
	return recs
}

// Trusted reports whether the trust file records the user's trust of
// config with exactly this hash.
func Trusted(file, config, hash string) bool {
	return hash != "" && readTrust(file)[config] == hash
}

// Record adds to the trust file that the user trusts config as it is
// now (hash).
func Record(file, config, hash string) error {
	recs := readTrust(file)
	recs[config] = hash
	b, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	return writePrivate(file, append(b, '\n'))
}

// writePrivate replaces path atomically, mode 0600 in a directory of
// mode 0700: trust records are the user's alone.
func writePrivate(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return disk.WriteAtomic("", path, data, 0o600)
}
