package disk

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteAtomic writes data to path so that a reader, a crash or a full disk
// never sees a half-written file (F8): the bytes go to a temporary file in
// the same directory (same file system, so the rename is atomic), are
// synced, then renamed over path. An existing file keeps its mode; a new
// file gets perm, and its missing parent directories are created. On any
// failure the original file is byte-identical and no temporary file is
// left behind.
//
// With root set, every step goes through os.Root: path must be inside
// root, and a directory on the way that became a link out of it (swapped
// while a permission prompt was open) makes the write fail instead of
// landing outside. A final link is written through — the link stays, its
// target changes — when it points inside root, and refused when it
// points outside, even at nothing yet. With root "", path is written
// wherever it is (the user's own files).
func WriteAtomic(root, path string, data []byte, perm fs.FileMode) error {
	if err := writeAtomic(root, path, data, perm, osOps()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeAtomic(root, path string, data []byte, perm fs.FileMode, ops fileOps) error {
	if root == "" {
		if !filepath.IsAbs(path) {
			abs, err := filepath.Abs(path)
			if err != nil {
				return err
			}
			path = abs
		}
		// os.Root refuses absolute links on the way (/var -> /private/var):
		// resolve the directories that exist first.
		path = realDirs(path)
		root = filepath.VolumeName(path) + string(filepath.Separator)
	}
	p, err := openIn(root, path)
	if err != nil {
		return err
	}
	defer p.Close()
	target, mode, err := p.target(perm)
	if err != nil {
		return err
	}
	if err := writeAndRename(p.r, target, data, mode, ops); err != nil {
		if escapes(err) {
			return outside(path)
		}
		return err
	}
	return nil
}

// target resolves where to write, relative to the root, and with which
// mode.
func (p *rooted) target(perm fs.FileMode) (string, fs.FileMode, error) {
	rel, fi, err := p.final()
	switch {
	case err != nil:
		return "", 0, err
	case fi != nil && fi.IsDir():
		return "", 0, errors.New("it is a directory")
	case fi != nil && !fi.Mode().IsRegular():
		return "", 0, ErrNotRegular
	case fi != nil:
		return rel, fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), nil
	}
	if err := p.r.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		if escapes(err) {
			return "", 0, outside(filepath.Join(p.dir, p.rel))
		}
		return "", 0, err
	}
	return rel, perm, nil
}

// fileOps are the steps of a write that can fail once the temporary file
// exists; tests replace them to check that every failure cleans up.
type fileOps struct {
	write  func(f *os.File, data []byte) (int, error)
	rename func(r *os.Root, oldpath, newpath string) error
}

// osOps are the real steps.
func osOps() fileOps {
	return fileOps{write: (*os.File).Write, rename: (*os.Root).Rename}
}

func writeAndRename(r *os.Root, target string, data []byte, mode fs.FileMode, ops fileOps) (err error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, name, err := createTemp(r, dir, "."+base+".mm-", ".tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			r.Remove(name)
		}
	}()
	if _, err = ops.write(tmp, data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = ops.rename(r, name, target); err != nil {
		return err
	}
	syncDir(r, dir)
	return nil
}

// createTemp is os.CreateTemp inside a root.
func createTemp(r *os.Root, dir, prefix, suffix string) (*os.File, string, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+rand.Text()[:10]+suffix)
		f, err := r.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", errors.New("cannot find a free temporary name")
}

// syncDir makes the rename durable where the platform allows it; a failure
// here does not undo a completed write, so it is ignored.
func syncDir(r *os.Root, dir string) {
	d, err := r.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
