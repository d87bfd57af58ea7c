package disk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds how many final-component links are followed, as the
// kernel's ELOOP does.
const maxLinks = 8

// rooted is a path inside an open root.
type rooted struct {
	r    *os.Root
	dir  string // the root's directory, as given
	real string // the same, symlinks resolved
	rel  string // the path, relative to the root
}

// openIn opens root and places path in it. A path that is not inside
// root, lexically, is ErrOutside.
func openIn(root, path string) (*rooted, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("%s: not an absolute path", path)
	}
	real := root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		real = r
	}
	rel, ok := within(root, path)
	if !ok {
		if rel, ok = within(real, path); !ok {
			return nil, fmt.Errorf("%s: %w (%s)", path, ErrOutside, root)
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	return &rooted{r: r, dir: root, real: real, rel: rel}, nil
}

func (p *rooted) Close() { p.r.Close() }

// within gives path relative to root when it is lexically inside it.
func within(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// final follows the links of the path's last component, the way the
// kernel would, but only inside the root: os.Root refuses absolute link
// targets, so one that names a place inside the root is made relative;
// one that leads out is ErrOutside — even when nothing exists there yet
// (a dangling `notes.txt -> ../outside/x` must not create it). It returns
// the path the links lead to, relative to the root, and what is there
// (nil when nothing is).
func (p *rooted) final() (string, fs.FileInfo, error) {
	rel := p.rel
	for range maxLinks {
		fi, err := p.r.Lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return rel, nil, nil
		case escapes(err):
			return "", nil, outside(filepath.Join(p.dir, p.rel))
		case err != nil:
			return "", nil, err
		case fi.Mode()&fs.ModeSymlink == 0:
			return rel, fi, nil
		}
		link, err := p.r.Readlink(rel)
		if err != nil {
			return "", nil, err
		}
		next, ok := "", false
		if filepath.IsAbs(link) {
			if next, ok = within(p.dir, link); !ok {
				next, ok = within(p.real, link)
			}
		} else {
			next, ok = within(".", filepath.Join(filepath.Dir(rel), link))
		}
		if !ok {
			return "", nil, outside(filepath.Join(p.dir, p.rel))
		}
		rel = next
	}
	return "", nil, fmt.Errorf("%s: too many levels of symbolic links", filepath.Join(p.dir, p.rel))
}

// realDirs resolves the symlinks of path's existing directories, leaving
// the last component as it is (a link there is followed by final).
func realDirs(path string) string {
	dir, base := filepath.Split(path)
	rest := ""
	for d := filepath.Clean(dir); ; {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(real, rest, base)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return path
		}
		rest = filepath.Join(filepath.Base(d), rest)
		d = parent
	}
}
