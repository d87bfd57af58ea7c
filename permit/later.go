package permit

import (
	"errors"
	"path/filepath"
	"slices"

	"github.com/mm-agent/mm/permit/runlater"
	"github.com/mm-agent/mm/tools"
)

// ErrRunsLater marks a write refused at the moment of writing because a
// link sent it to a file that runs later (RunLater.Redirect).
var ErrRunsLater = errors.New("a link leads the write to a file that runs later")

// redirectError is that refusal, worded for the model.
type redirectError string

func (e redirectError) Error() string { return string(e) }
func (e redirectError) Unwrap() error { return ErrRunsLater }

// runsLater says why the approval writes a file that runs later, naming
// the file: the tool's own reason (bash) or the first path it writes that
// is one. refuse is set when a path reaches such a file only through a
// link — the approval does not name where it lands — so the Policy
// refuses it instead of asking about a name that is not the file. A tool
// that can only say it may write anything (an MCP tool) is not asked for
// that alone: yolo would then mean nothing for it.
func (p *Policy) runsLater(a tools.Approval) (why string, refuse bool) {
	if a.RunsLater != "" {
		return a.RunsLater, false
	}
	p.mu.Lock()
	rs := p.runLater
	p.mu.Unlock()
	if a.Caps&(tools.WritesWorkspace|tools.WritesOutside|tools.WritesRunLater) == 0 {
		return "", false
	}
	if len(rs) == 0 {
		return "", false
	}
	var paths []string
	for _, d := range a.Diffs {
		paths = append(paths, filepath.Clean(d.Path))
	}
	for _, l := range a.Locations {
		paths = append(paths, filepath.Clean(l.Path))
	}
	for _, r := range rs {
		for _, abs := range paths {
			if real := tools.Real(abs); !slices.Contains(paths, real) {
				if why := r.Redirect(abs, real); why != "" {
					return why, true
				}
			}
		}
	}
	for _, r := range rs {
		for _, abs := range paths {
			if why := r.Why(abs); why != "" {
				return r.Name(abs) + " runs later — " + why, false
			}
		}
	}
	return "", false
}

// WatchRunLater makes every write to a file that runs later (r.Why) ask
// the user, in every mode, yolo included: one RunLater per root of the
// session, each root's files judged on their own, and every root asked
// about every write (a link in one may lead into another).
func (p *Policy) WatchRunLater(rs ...*runlater.RunLater) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runLater = rs
}

// Landing checks a write at the moment it is made, where it lands: real
// is what the writer found at path with every link followed, the
// directory held open (fileedit/disk), or Real(path) for a writer that
// cannot hold it (the editor). A link that leads the write to a file that
// runs later — put there before the question or while it was open — is
// refused with ErrRunsLater; the question was about path.
func (p *Policy) Landing(path, real string) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	rs := p.runLater
	p.mu.Unlock()
	for _, r := range rs {
		if why := r.Redirect(path, real); why != "" {
			return redirectError(why)
		}
	}
	return nil
}
