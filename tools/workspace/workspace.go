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

// Asker puts a question to the user; it returns allowed and whether the
// answer should be remembered for the session ("always"/"never").
type Asker func(ctx context.Context, req tools.Approval) (allowed, remember bool, err error)

// Options configure a Workspace.
type Options struct {
	// Cwd is the session's working directory; it must be absolute.
	Cwd string
	// Roots confine paths; empty means just Cwd.
	Roots []string
	// Policy decides without asking when it can; nil asks every time.
	Policy *tools.Policy
	// Ask is called when the policy cannot decide; nil refuses, with a
	// reason telling the model the action needs permission.
	Ask Asker
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

// Approve implements tools.Env: the policy first, then the question.
func (w *Workspace) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	return Decide(ctx, w.opts.Policy, w.opts.Ask, req)
}

// Decide applies policy then asks; it is shared with front ends that wrap
// a Workspace with their own way of asking.
func Decide(ctx context.Context, p *tools.Policy, ask Asker, req tools.Approval) (tools.Decision, error) {
	if d, ok := p.Decide(req); ok {
		return d, nil
	}
	if ask == nil {
		return tools.Decision{Reason: "this action needs the user's permission and no one can be asked (run with --yes or set yolo: true)"}, nil
	}
	allowed, remember, err := ask(ctx, req)
	if err != nil {
		return tools.Decision{}, err
	}
	if remember {
		p.Remember(req, allowed)
	}
	if !allowed {
		return tools.Decision{Reason: "the user declined"}, nil
	}
	return tools.Decision{Allowed: true, Reason: "the user allowed it"}, nil
}
