package disk

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// The limits of what mm reads on its own.
const (
	// MaxSource bounds a source file: what read_file, an edit and the
	// language servers' scans read. Far above any file a small model can
	// take in; a file over it is a log or a data file, read with bash.
	MaxSource = 8 << 20
	// MaxControl bounds a file that steers mm: config, project context
	// (AGENTS.md), a skill. All of it goes into every request, so a
	// megabyte is already far past any context window.
	MaxControl = 1 << 20
)

// chunk is how much is read between two looks at the context.
const chunk = 256 << 10

// Read returns the content of path, a regular file of at most limit
// bytes. With root set, path must be inside root and is opened through
// os.Root, so no symlink or ".." leads out of it; with root "", path is
// read wherever it is (the user's own files: config, state). A FIFO, a
// device or a socket is ErrNotRegular, without blocking; a larger file
// is a *TooLargeError; a missing one is fs.ErrNotExist; the read stops
// with ctx's error when ctx ends.
func Read(ctx context.Context, root, path string, limit int64) ([]byte, error) {
	f, err := open(root, path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	data, err := readAll(ctx, f, limit)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return data, nil
}

// open opens path for reading without blocking on a FIFO and checks that
// it is a regular file.
func open(root, path string) (*os.File, error) {
	var f *os.File
	if root == "" {
		var err error
		if f, err = os.OpenFile(path, os.O_RDONLY|nonBlock, 0); err != nil {
			return nil, err
		}
	} else {
		p, err := openIn(root, path)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		rel, fi, err := p.final()
		switch {
		case err != nil:
			return nil, err
		case fi == nil:
			return nil, fs.ErrNotExist
		case !fi.Mode().IsRegular() && !fi.IsDir():
			return nil, ErrNotRegular
		}
		if f, err = p.r.OpenFile(rel, os.O_RDONLY|nonBlock, 0); err != nil {
			if escapes(err) {
				return nil, outside(path)
			}
			return nil, err
		}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, fmt.Errorf("it is a directory")
		}
		return nil, ErrNotRegular
	}
	return f, nil
}

// readAll reads f up to limit bytes, looking at ctx between chunks.
func readAll(ctx context.Context, f *os.File, limit int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{Size: fi.Size(), Limit: limit}
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if int64(len(data)) > limit {
			// It grew while being read.
			return nil, &TooLargeError{Size: int64(len(data)), Limit: limit}
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):min(cap(data), len(data)+chunk)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Check reports whether path exists and Read would take it, without
// reading it: nil, or Read's error (fs.ErrNotExist when it is missing).
// A front end that reads through another program (the editor) asks it
// first, so that program is never sent to a FIFO or a huge file.
func Check(root, path string, limit int64) error {
	f, err := open(root, path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > limit {
		return &TooLargeError{Size: fi.Size(), Limit: limit}
	}
	return nil
}
