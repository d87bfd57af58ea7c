package lspbridge

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// maxScan bounds the files ChangedSince looks at per root: a command in a
// huge tree must not cost more than the command.
const maxScan = 50000

// ChangedSince finds the files of the running servers' roots modified
// since t (source files of their language and root markers such as go.mod),
// and the open documents deleted since, and announces them as Changed
// does. bash calls it after each command with the command's start time,
// since it cannot know which files a command touched.
func (m *Manager) ChangedSince(ctx context.Context, t time.Time) {
	if !m.Available() {
		return
	}
	var paths []string
	for _, s := range m.running() {
		paths = append(paths, s.modifiedSince(ctx, t)...)
	}
	slices.Sort(paths)
	m.Changed(ctx, slices.Compact(paths))
}

// mtimeSlack widens "since": file times come from the kernel's coarse
// clock, which lags time.Now by up to a tick, and some file systems keep
// whole seconds. Announcing an unchanged file costs the server little;
// missing a changed one costs the model a wrong answer.
const mtimeSlack = time.Second

// modifiedSince walks the server's root for its files changed since t.
func (s *server) modifiedSince(ctx context.Context, t time.Time) []string {
	t = t.Add(-mtimeSlack)
	exts := map[string]bool{}
	for _, e := range s.cfg.Extensions {
		exts[e] = true
	}
	markers := map[string]bool{}
	for _, m := range s.cfg.RootMarkers {
		for _, alt := range strings.Split(m, "|") {
			markers[alt] = true
		}
	}
	var out []string
	n := 0
	_ = filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return filepath.SkipDir
		}
		if n++; n > maxScan {
			return filepath.SkipAll
		}
		name := d.Name()
		if d.IsDir() {
			if p != s.root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "__pycache__") {
				return filepath.SkipDir
			}
			return nil
		}
		if !exts[filepath.Ext(name)] && !markers[name] && name != "go.sum" {
			return nil
		}
		if info, err := d.Info(); err == nil && !info.ModTime().Before(t) {
			out = append(out, p)
		}
		return nil
	})
	// Open documents whose file is gone.
	s.mu.Lock()
	for path := range s.docs {
		if _, err := os.Stat(path); err != nil {
			out = append(out, path)
		}
	}
	s.mu.Unlock()
	return out
}
