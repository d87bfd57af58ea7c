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
	"syscall"

	"github.com/mm-agent/mm/permit/internal/statefile"
)

// trustVersion begins every hash: when what a hash covers changes, the
// records made before stop matching and the user is asked once more.
const trustVersion = "mm trust 2\x00"

// Bounds of what trust covers under .mm/: past them mm cannot bind trust
// to all of it, and says so rather than trusting a part.
const (
	MaxFiles = 1000
	MaxBytes = 64 << 20
)

// Files lists every file under the workspace's .mm/ directory: a hook
// can source a lib.sh the config never names, and a change to it must
// end the trust too. mm keeps nothing of its own there (sessions and
// trust live in the state directory), so everything counts. A link is
// listed, not followed into a directory.
func Files(dir string) ([]string, error) {
	root := filepath.Join(dir, ".mm")
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real // .mm itself a link: what it points to is what mm reads
		}
	}
	var out []string
	var size int64
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return nil
		}
		out = append(out, p)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			size += fi.Size()
		}
		if len(out) > MaxFiles || size > MaxBytes {
			return fmt.Errorf("%s holds more than %d files or %d MiB: mm cannot bind trust to all of it — keep only mm's files there", filepath.Join(dir, ".mm"), MaxFiles, MaxBytes>>20)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// Hash is the content hash of parts: each file's path, where it links to
// when it is a link, and its bytes (a missing file counts as missing), so
// changing, adding or removing any of them changes it. known are bytes
// already read for a part (the config files as they were parsed): they
// are hashed instead of a second reading, so what is trusted is what was
// loaded, not what the disk holds a moment later.
func Hash(parts []string, known map[string][]byte) (string, error) {
	h := sha256.New()
	io.WriteString(h, trustVersion)
	for _, p := range parts {
		fmt.Fprintf(h, "%s\x00", p)
		if target, err := os.Readlink(p); err == nil {
			fmt.Fprintf(h, "link\x00%s\x00", target)
		}
		if b, ok := known[p]; ok {
			fmt.Fprintf(h, "%d\x00", len(b))
			h.Write(b)
			continue
		}
		if err := hashFile(h, p); err != nil {
			return "", fmt.Errorf("hash %s: %w", p, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFile writes p's size and bytes to h, streamed (a named program can
// be large), or "missing"/"not a file" for what has no bytes to hash.
func hashFile(h io.Writer, p string) error {
	// O_NONBLOCK: a FIFO planted under .mm/ would otherwise block the
	// open, and mm with it, until something writes to it.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(h, "missing\x00")
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		fmt.Fprintf(h, "not a file\x00")
		return nil
	}
	fmt.Fprintf(h, "%d\x00", fi.Size())
	if n, err := io.Copy(h, f); err != nil || n != fi.Size() {
		return fmt.Errorf("read %d of %d bytes: %v", n, fi.Size(), err)
	}
	return nil
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
	return statefile.Write(file, append(b, '\n'))
}
