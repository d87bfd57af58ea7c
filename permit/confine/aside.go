package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mm-agent/mm/permit/runlater"
)

// A confined command may create files in the workspace — that is the
// point — and so files that run later (.envrc, .vscode/tasks.json, a
// .git of its own). The ones that exist when it starts are read-only to
// it; a new one is found when it ends, by comparing the workspace's
// files that run later before and after, and taken back out: moved, not
// deleted, to a directory of mm's, and the model (and the user, who sees
// the output) told where. A link of such a name that the command replaced
// is put back as it was.

// snapshot is what ran later in one root at one moment (runlater.Look),
// by path.
type snapshot struct {
	runlater.Found
	entries map[string]runlater.Entry
}

// scan looks at every root of the run.
func (r *Run) scan() []snapshot {
	out := make([]snapshot, 0, len(r.roots))
	for _, root := range r.roots {
		s := snapshot{Found: runlater.Look(root), entries: map[string]runlater.Entry{}}
		for _, e := range s.Entries {
			s.entries[e.Path] = e
		}
		out = append(out, s)
	}
	return out
}

// Finish takes out what the command made that runs later, and puts back
// the links of such names it replaced or removed. It returns the note
// for the model, "" when there was nothing to do.
func (r *Run) Finish() string {
	if r == nil {
		return ""
	}
	r.hooks.Wait() // a command that never started leaves git's answer unread
	var done []string
	var failed []string
	dest := ""
	for i, after := range r.scan() {
		before := r.before[i]
		var paths []string
		for p := range after.entries {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			e, b := after.entries[p], before.entries[p]
			if b.Path != "" && (!b.Link || e.Link && e.Target == b.Target) {
				continue // as it was
			}
			if dest == "" {
				dest = r.asideDir(after.Root)
			}
			to := filepath.Join(dest, e.Rel)
			if err := move(e.Path, to); err != nil {
				failed = append(failed, fmt.Sprintf("%s (%v)", e.Rel, err))
				continue
			}
			done = append(done, e.Rel+" — "+e.Why)
		}
		for p, b := range before.entries {
			if _, ok := after.entries[p]; b.Link && (!ok || after.entries[p].Target != b.Target) {
				if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
					os.Symlink(b.Target, p)
				}
			}
		}
	}
	return note(done, failed, dest)
}

func note(done, failed []string, dest string) string {
	var b strings.Builder
	if len(done) > 0 {
		fmt.Fprintf(&b, "[mm: the sandbox took out what the command made that runs later: %s. It is kept in %s, not in the workspace. If it is needed, write it with write_file, which asks the user]\n", strings.Join(done, "; "), dest)
	}
	if len(failed) > 0 {
		fmt.Fprintf(&b, "[mm: the command made files that run later which mm could not take out: %s — tell the user to check them before anything runs them]\n", strings.Join(failed, "; "))
	}
	return b.String()
}

// asideDir is a new directory for what one command made in root.
func (r *Run) asideDir(root string) string {
	base := r.s.opts.Aside
	if base == "" {
		base = filepath.Join(r.s.tmp, ".set-aside")
	}
	return filepath.Join(base, time.Now().Format("20060102-150405.000000")+"-"+filepath.Base(root))
}

// move renames from to to, copying across file systems; links are moved
// as links, never followed.
func move(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	err := os.Rename(from, to)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyTree(from, to); err != nil {
		return err
	}
	return os.RemoveAll(from)
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case d.Type().IsRegular():
			return copyFile(p, dst)
		}
		return nil // a socket or a device: nothing to keep
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
