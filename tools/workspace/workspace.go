// Package workspace is the disk implementation of tools.Env: files are read
// from and written to the local disk (atomically, through fileedit), and
// approvals go to a policy and then to a question asked by the front end.
package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/mm-agent/mm/fileedit/disk"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// Options configure a Workspace.
type Options struct {
	// Cwd is the session's working directory; it must be absolute.
	Cwd string
	// Roots confine paths; empty means just Cwd.
	Roots []string
	// Policy decides without asking when it can; nil asks every time.
	Policy *permit.Policy
	// Ask renders the question when the policy cannot decide; nil
	// refuses, with a reason telling the model the action needs
	// permission.
	Ask permit.Asker
	// Files is the view of files; nil means Disk.
	Files tools.Files
}

// Workspace is a tools.Env on the local disk.
type Workspace struct {
	opts  Options
	reads *tools.ReadTracker
}

// New returns a Workspace; Cwd is made absolute.
func New(opts Options) (*Workspace, error) {
	abs, err := filepath.Abs(opts.Cwd)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", opts.Cwd, err)
	}
	opts.Cwd = abs
	if len(opts.Roots) == 0 {
		opts.Roots = []string{abs}
	}
	if opts.Files == nil {
		opts.Files = Disk{Roots: opts.Roots, Landing: opts.Policy.Landing}
	}
	return &Workspace{opts: opts, reads: tools.NewReadTracker()}, nil
}

// Cwd implements tools.Env.
func (w *Workspace) Cwd() string { return w.opts.Cwd }

// Roots implements tools.Env.
func (w *Workspace) Roots() []string { return w.opts.Roots }

// Reads implements tools.Env.
func (w *Workspace) Reads() *tools.ReadTracker { return w.reads }

// Progress implements tools.Env; on disk there is no one to tell.
func (w *Workspace) Progress(string) {}

// ReadFile implements tools.Files through the workspace's view.
func (w *Workspace) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return w.opts.Files.ReadFile(ctx, path)
}

// WriteFile implements tools.Files through the workspace's view.
func (w *Workspace) WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error {
	return w.opts.Files.WriteFile(ctx, path, data, mode)
}

// Disk is the view of files on the local disk, through mm's one file
// reader and writer (fileedit/disk): a read takes a regular file of at
// most disk.MaxSource bytes; a write is atomic and keeps the mode of an
// existing file. Inside one of Roots every operation goes through
// os.Root, so no symlink — not even a directory swapped for one while a
// permission prompt was open — leads out of it.
type Disk struct {
	// Roots confine: a write outside all of them is refused. Reads
	// outside them (a language server's file in the module cache) are
	// bounded but not confined. Nil confines nothing.
	Roots []string
	// Landing, when set, has the last word on a write inside a root: it
	// gets the path and where the write lands, every link followed, at
	// the moment of writing (permit.Policy.Landing refuses a link that
	// leads to a file that runs later). Nil checks nothing more.
	Landing func(path, real string) error
}

// ReadFile implements tools.Files.
func (d Disk) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return disk.Read(ctx, d.rootOf(path), path, disk.MaxSource)
}

// WriteFile implements tools.Files.
func (d Disk) WriteFile(_ context.Context, path string, data []byte, mode fs.FileMode) error {
	root := d.rootOf(path)
	if root == "" && len(d.Roots) > 0 {
		return fmt.Errorf("write %s: %w", path, disk.ErrOutside)
	}
	return disk.WriteAtomicChecked(root, path, data, mode, d.Landing)
}

// rootOf is the root holding path, "" when none does.
func (d Disk) rootOf(path string) string {
	for _, r := range d.Roots {
		if rel, err := filepath.Rel(r, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return r
		}
	}
	return ""
}

// Approve implements tools.Env through the one permission flow.
func (w *Workspace) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	return w.opts.Policy.Approve(ctx, req, w.opts.Ask)
}
