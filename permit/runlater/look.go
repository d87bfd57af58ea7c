package runlater

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mm-agent/mm/tools"
)

// A look at a workspace is one bounded walk that serves the sandbox and
// the file tools alike: what runs later there, which a sandbox makes
// read-only to a command and compares after it; and the links named like
// such files, whose targets run later under another name — writing one
// is asked (RunLater.Why), and a sandbox makes it read-only too.

// maxScan bounds the entries a look takes in outside the directories
// that run later, maxLinkScan all it takes in — it enters those for
// links: a command costs two bounded looks, a write one, not walks of a
// whole monorepo.
const (
	maxScan     = 20000
	maxLinkScan = 20000
)

// Entry is a file, directory or link of a workspace named like one that
// runs later.
type Entry struct {
	// Path is where it is, below the root with the root's own links
	// resolved; Rel is Path relative to the root.
	Path, Rel string
	// Why says why it runs later (RunsLater).
	Why string
	// Link: it is a symbolic link, which holds Target and leads to Real
	// (every link on the way resolved).
	Link         bool
	Target, Real string
}

// Found is what one look at a workspace root found.
type Found struct {
	// Root is the root as it was given.
	Root string
	// Entries are the files and directories that run later, and the
	// links of such names; a directory among them is not entered: what
	// is inside it is its.
	Entries []Entry
	// Links are the links named like a file or directory that runs
	// later, wherever they are: inside such a directory too, where
	// people link git hooks to scripts they track
	// (.git/hooks/pre-commit -> ../../scripts/check.sh).
	Links []Entry
}

// Look walks root once for what runs later in it (Found). Dependencies
// and git's object stores (skip) are not entered: they are large, and
// hold nothing that runs later.
func Look(root string) Found {
	l := look{Found: Found{Root: root}, real: tools.Real(root)}
	_ = filepath.WalkDir(l.real, l.visit)
	return l.Found
}

// look is one walk in progress.
type look struct {
	Found
	real          string // the root, links resolved: what is walked
	seen, outside int    // entries taken in; those outside a directory that runs later
	in            string // the directory that runs later the walk is in, "" when none
}

func (l *look) visit(p string, d fs.DirEntry, err error) error {
	if err != nil {
		if d != nil && d.IsDir() && p != l.real {
			return filepath.SkipDir
		}
		return nil
	}
	if l.in != "" && !under(p, l.in) {
		l.in = ""
	}
	if l.seen++; l.in == "" {
		l.outside++
	}
	entries, links := l.in == "" && l.outside <= maxScan, l.seen <= maxLinkScan
	switch {
	case !entries && !links && l.in == "":
		return filepath.SkipAll
	case !links && l.in != "" && d.IsDir():
		return filepath.SkipDir // nothing more to look for in there
	case p == l.real:
		return nil
	}
	rel, _ := filepath.Rel(l.real, p)
	if d.IsDir() {
		return l.dir(p, rel, d.Name(), entries, links)
	}
	link := d.Type()&fs.ModeSymlink != 0
	if !entries && !(link && links) {
		return nil
	}
	// A link may stand for a directory (.vscode -> config/editor).
	why := reason(rel, link)
	if why == "" {
		return nil
	}
	e := Entry{Path: p, Rel: rel, Why: why, Link: link}
	if link {
		e.Target, _ = os.Readlink(p)
		e.Real = tools.Real(p)
		if links {
			l.Links = append(l.Links, e)
		}
	}
	if entries {
		l.Entries = append(l.Entries, e)
	}
	return nil
}

// dir takes in the directory at p: one that runs later is an entry, and
// entered only to look for links.
func (l *look) dir(p, rel, name string, entries, links bool) error {
	if l.in == "" {
		if why := reason(rel, true); why != "" {
			if entries {
				l.Entries = append(l.Entries, Entry{Path: p, Rel: rel, Why: why})
			}
			if !links {
				return filepath.SkipDir
			}
			l.in = p
			return nil
		}
	}
	if skip(rel, name) {
		return filepath.SkipDir
	}
	return nil
}

// reason says why rel runs later as a file or, when it may be one, as a
// directory; "" when it does not.
func reason(rel string, dir bool) string {
	if why := RunsLater(rel); why != "" || !dir {
		return why
	}
	return RunsLater(filepath.Join(rel, "f"))
}

// skip names the directories a look does not enter: dependencies, and
// the object stores, logs and LFS files of git's directory and of the
// submodules' repositories inside it.
func skip(rel, name string) bool {
	switch name {
	case "node_modules", "__pycache__":
		return true
	case "objects", "logs", "lfs":
		rel = filepath.ToSlash(rel)
		return strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/")
	}
	return false
}

// Targets are where the links named like a file or directory that runs
// later lead, links resolved: what runs later under another name.
func (f Found) Targets() []string {
	var out []string
	for _, l := range f.Links {
		out = append(out, l.Real)
	}
	return out
}
