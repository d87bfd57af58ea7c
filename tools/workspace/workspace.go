// Package workspace is the disk implementation of tools.Env: files are read
// from and written to the local disk (atomically, through fileedit), and
// approvals go to a policy and then to a question asked by the front end.
package workspace

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mm-agent/mm/fileedit"
	"github.com/mm-agent/mm/tools"
)

// Options configure a Workspace.
type Options struct {
	// Cwd is the session's working directory; it must be absolute.
	Cwd string
	// Roots confine paths; empty means just Cwd.
	Roots []string
	// Policy decides without asking when it can; nil asks every time.
	Policy *tools.Policy
	// Ask renders the question when the policy cannot decide; nil
	// refuses, with a reason telling the model the action needs
	// permission.
	Ask tools.Asker
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
		opts.Files = Disk{}
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

// Disk is the view of files on the local disk: writes are atomic and keep
// the mode of an existing file (fileedit.WriteAtomic).
type Disk struct{}

// ReadFile implements tools.Files.
func (Disk) ReadFile(_ context.Context, path string) ([]byte, error) {
	return os.ReadFile(path)
}

// WriteFile implements tools.Files.
func (Disk) WriteFile(_ context.Context, path string, data []byte, mode fs.FileMode) error {
	return fileedit.WriteAtomic(path, data, mode)
}

// Approve implements tools.Env through the one permission flow.
func (w *Workspace) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	return w.opts.Policy.Approve(ctx, req, w.opts.Ask)
}
