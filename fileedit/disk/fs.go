package disk

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
)

// DirFS is the files under dir as an fs.FS whose reads follow Read's
// rules: regular files only, at most limit bytes, confined to root when
// root is set ("" for the user's own folders). A folder of skills or
// config a repository ships goes through it, so a planted FIFO or a link
// to /dev/zero or out of the workspace is an error, not a hang.
func DirFS(dir, root string, limit int64) fs.FS {
	return dirFS{dir: dir, root: root, limit: limit}
}

type dirFS struct {
	dir, root string
	limit     int64
}

func (d dirFS) path(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return filepath.Join(d.dir, filepath.FromSlash(name)), nil
}

// Open opens a file or a folder without blocking on a FIFO; reading a
// file's content goes through ReadFile.
func (d dirFS) Open(name string) (fs.File, error) {
	p, err := d.path("open", name)
	if err != nil {
		return nil, err
	}
	if d.root == "" {
		return os.OpenFile(p, os.O_RDONLY|nonBlock, 0)
	}
	in, err := openIn(d.root, p)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	f, err := in.r.OpenFile(in.rel, os.O_RDONLY|nonBlock, 0)
	if escapes(err) {
		return nil, outside(p)
	}
	return f, err
}

// ReadFile implements fs.ReadFileFS through Read.
func (d dirFS) ReadFile(name string) ([]byte, error) {
	p, err := d.path("read", name)
	if err != nil {
		return nil, err
	}
	return Read(context.Background(), d.root, p, d.limit)
}
