package fileedit

import (
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
// file gets perm, and its missing parent directories are created. A path
// that is a symbolic link is written through: the link stays and its target
// changes. On any failure the original file is byte-identical and no
// temporary file is left behind.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	target, mode, err := writeTarget(path, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := writeAndRename(target, data, mode, osOps()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeTarget resolves where to write and with which mode.
func writeTarget(path string, perm fs.FileMode) (string, fs.FileMode, error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return "", 0, errors.New("it is a directory")
	case err == nil:
		return target, fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", 0, err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return "", 0, err
	}
	return target, perm, nil
}

// fileOps are the steps of a write that can fail once the temporary file
// exists; tests replace them to check that every failure cleans up.
type fileOps struct {
	write  func(f *os.File, data []byte) (int, error)
	rename func(oldpath, newpath string) error
}

// osOps are the real steps.
func osOps() fileOps {
	return fileOps{write: (*os.File).Write, rename: os.Rename}
}

func writeAndRename(target string, data []byte, mode fs.FileMode, ops fileOps) (err error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".mm-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
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
	if err = ops.rename(tmp.Name(), target); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes the rename durable where the platform allows it; a failure
// here does not undo a completed write, so it is ignored.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
