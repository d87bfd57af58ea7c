package disk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// maxHops bounds how many links a write follows on its way, as the
// kernel's ELOOP does.
const maxHops = 40

// landing is where a write lands: the directory it lands in, held open,
// that directory's path relative to the root with no link in it, the
// file's name there, and what is there now (nil when nothing is).
type landing struct {
	dir     *os.Root
	realDir string
	name    string
	fi      fs.FileInfo
}

// land walks the path from the root one component at a time, following
// links the way the kernel would but only inside the root, and holds open
// each directory it passes, checking that what it opened is what it
// looked at. Where the write lands is then known exactly — real, every
// link resolved — and stays so: a component swapped for a link once the
// walk passed it changes nothing about where the bytes go, since they go
// into the directory held open. check sees that real path (absolute,
// under the root as given) before anything is created, and may refuse it;
// missing directories are created after it.
func (p *rooted) land(check func(real string) error) (*landing, error) {
	path := p.rel
	for hops := 0; hops <= maxHops; hops++ {
		dir, realDir, missing, link, err := p.walk(path)
		if err != nil {
			return nil, err
		}
		if link != "" {
			path = link
			continue
		}
		name := filepath.Base(path)
		var fi fs.FileInfo
		if len(missing) == 0 {
			fi, err = dir.Lstat(name)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				fi = nil
			case err != nil:
				dir.Close()
				return nil, err
			case fi.Mode()&fs.ModeSymlink != 0:
				next, err := p.follow(dir, realDir, name)
				dir.Close()
				if err != nil {
					return nil, err
				}
				path = next
				continue
			}
		}
		real := filepath.Join(append([]string{realDir}, append(missing, name)...)...)
		if check != nil {
			if err := check(filepath.Join(p.dir, real)); err != nil {
				dir.Close()
				return nil, err
			}
		}
		for _, m := range missing {
			sub, err := mkdirIn(dir, m)
			dir.Close()
			if err != nil {
				return nil, err
			}
			dir = sub
		}
		return &landing{dir: dir, realDir: filepath.Dir(real), name: name, fi: fi}, nil
	}
	return nil, fmt.Errorf("%s: too many levels of symbolic links", filepath.Join(p.dir, p.rel))
}

// walk opens the directories of path (relative to the root) one by one.
// It returns the deepest that exists, held open, with its real path and
// the components below it that do not exist yet; or, when a component is
// a link, the path with that link replaced by where it leads (link), to
// walk again from the root.
func (p *rooted) walk(path string) (dir *os.Root, realDir string, missing []string, link string, err error) {
	dir, err = p.r.OpenRoot(".")
	if err != nil {
		return nil, "", nil, "", err
	}
	realDir = "."
	parts := strings.Split(filepath.Dir(path), string(filepath.Separator))
	if filepath.Dir(path) == "." {
		parts = nil
	}
	for i, c := range parts {
		fi, err := dir.Lstat(c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return dir, realDir, parts[i:], "", nil
		case err != nil:
			dir.Close()
			return nil, "", nil, "", err
		case fi.Mode()&fs.ModeSymlink != 0:
			next, err := p.follow(dir, realDir, c)
			dir.Close()
			if err != nil {
				return nil, "", nil, "", err
			}
			rest := append([]string{next}, parts[i+1:]...)
			return nil, "", nil, filepath.Join(append(rest, filepath.Base(path))...), nil
		case !fi.IsDir():
			dir.Close()
			return nil, "", nil, "", fmt.Errorf("%s: %w", filepath.Join(realDir, c), syscall.ENOTDIR)
		}
		sub, err := openSame(dir, c, fi)
		dir.Close()
		if err != nil {
			return nil, "", nil, "", err
		}
		dir, realDir = sub, filepath.Join(realDir, c)
	}
	return dir, realDir, nil, "", nil
}

// follow reads the link name in dir (whose real path is realDir) and
// returns where it leads, relative to the root; a link out of the root is
// ErrOutside, even when nothing is there yet.
func (p *rooted) follow(dir *os.Root, realDir, name string) (string, error) {
	target, err := dir.Readlink(name)
	if err != nil {
		return "", err
	}
	next, ok := "", false
	if filepath.IsAbs(target) {
		if next, ok = within(p.dir, target); !ok {
			next, ok = within(p.real, target)
		}
	} else {
		next, ok = within(".", filepath.Join(realDir, target))
	}
	if !ok {
		return "", outside(filepath.Join(p.dir, p.rel))
	}
	return next, nil
}

// openSame opens the directory name in dir and checks it is the one
// Lstat saw (fi): were it swapped for a link in between, os.Root would
// follow the link, and the walk would no longer know where it is.
func openSame(dir *os.Root, name string, fi fs.FileInfo) (*os.Root, error) {
	sub, err := dir.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	got, err := sub.Stat(".")
	if err != nil {
		sub.Close()
		return nil, err
	}
	if !os.SameFile(got, fi) {
		sub.Close()
		return nil, fmt.Errorf("%s: %w", name, ErrChanged)
	}
	return sub, nil
}

// mkdirIn creates the directory name in dir (or takes the one that is
// there) and opens it, checking it is a directory, not a link.
func mkdirIn(dir *os.Root, name string) (*os.Root, error) {
	if err := dir.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	fi, err := dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w", name, ErrChanged)
	}
	return openSame(dir, name, fi)
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
