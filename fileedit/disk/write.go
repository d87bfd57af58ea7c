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
// never sees a half-written file: the bytes go to a temporary file in
// the same directory (same file system, so the rename is atomic), are
// synced, then renamed over path. An existing file keeps its mode; a new
// file gets perm, and its missing parent directories are created. On any
// failure the original file is byte-identical and no temporary file is
// left behind.
//
// With root set, every step goes through os.Root: path must be inside
// root, and a directory on the way that became a link out of it (swapped
// while a permission prompt was open) makes the write fail instead of
// landing outside. The directory the file lands in is found one component
// at a time and held open while the file is written and renamed into it
// (land), so where the write lands is decided once. A final link is written through — the link stays, its
// target changes — when it points inside root, and refused when it
// points outside, even at nothing yet. With root "", path is written
// wherever it is (the user's own files).
func WriteAtomic(root, path string, data []byte, perm fs.FileMode) error {
	return WriteAtomicChecked(root, path, data, perm, nil)
}

// WriteAtomicChecked is WriteAtomic with a last look at where the write
// lands: inside root, check (when set) is called with path and the path
// the write lands at — every link on the way followed, absolute under
// root — at the moment of writing, with the directory it lands in held
// open, so what check approves is where the bytes go. An error from check
// refuses the write; nothing is created.
func WriteAtomicChecked(root, path string, data []byte, perm fs.FileMode, check func(path, real string) error) error {
	if err := writeAtomic(root, path, data, perm, osOps(), check); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeAtomic(root, path string, data []byte, perm fs.FileMode, ops fileOps, check func(path, real string) error) error {
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
	var look func(string) error
	if check != nil {
		look = func(real string) error { return check(path, real) }
	}
	l, err := p.land(look)
	if err != nil {
		return err
	}
	defer l.dir.Close()
	mode, err := l.mode(perm)
	if err != nil {
		return err
	}
	if err := writeAndRename(l.dir, l.name, data, mode, ops); err != nil {
		if escapes(err) {
			return outside(path)
		}
		return err
	}
	return nil
}

// mode is the mode the written file gets: an existing file's own, perm
// for a new one. What is there must be a regular file.
func (l *landing) mode(perm fs.FileMode) (fs.FileMode, error) {
	switch fi := l.fi; {
	case fi == nil:
		return perm, nil
	case fi.IsDir():
		return 0, errors.New("it is a directory")
	case !fi.Mode().IsRegular():
		return 0, ErrNotRegular
	default:
		return fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), nil
	}
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
