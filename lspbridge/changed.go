package lspbridge

import (
	"github.com/mm-agent/mm/fileedit/disk"

	"bytes"
	"context"
	"fmt"
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
// and the open documents deleted since, announces them as Changed does,
// and returns what the change did to the diagnostics, as After does for
// an edit: bash calls it after each command with the command's start
// time, since it cannot know which files a command touched. The files
// compared are those mm has open, whose old text it holds (with their
// importers, for a server that reports open files only), and for a server
// that checks its whole root every file, matched without line numbers;
// a changed file that could not be compared is named as not checked.
// It returns "" when no source file changed. What the check finds after
// that goes to late (nil: dropped).
func (m *Manager) ChangedSince(ctx context.Context, t time.Time, late *Late) string {
	if !m.Available() {
		return ""
	}
	var paths []string
	for _, s := range m.running() {
		paths = append(paths, s.modifiedSince(ctx, t)...)
	}
	slices.Sort(paths)
	paths = slices.Compact(paths)
	unchecked := map[*server][]string{}
	snap := m.snapshot(ctx, paths, false, func(s *server, c string) (snapFile, bool) {
		if text, open := s.docText(c); open {
			now, err := disk.Read(ctx, s.root, c, disk.MaxSource)
			if err == nil && bytes.Equal(now, text) {
				return snapFile{}, false // unchanged: edited by mm just before
			}
			return snapFile{path: c, old: text, existed: true}, true
		}
		if s.cfg.Workspace {
			return snapFile{path: c, unknown: true}, true
		}
		if _, err := os.Stat(c); err == nil {
			unchecked[s] = append(unchecked[s], c)
		}
		return snapFile{}, false
	})
	if snap != nil {
		snap.command = true
	}
	snap.DeliverLate(late)
	// The baseline is taken while the servers still hold the old text.
	snap.Wait(ctx)
	m.Changed(ctx, paths)
	var changes []Change
	if snap != nil {
		for _, g := range snap.groups {
			for _, f := range g.files {
				if data, err := disk.Read(ctx, g.srv.root, f.path, disk.MaxSource); err == nil {
					changes = append(changes, Change{Path: f.path, Content: data})
				}
			}
		}
	}
	var parts []string
	if d := m.AfterChanges(ctx, snap, changes); d != "" {
		parts = append(parts, d)
	}
	for _, s := range m.running() {
		if ps := unchecked[s]; len(ps) > 0 {
			it := "it"
			if len(ps) > 1 {
				it = "them"
			}
			parts = append(parts, fmt.Sprintf("%s: %s changed by the command not checked (mm had not opened %s and %s reports open files only; edit_file or lsp diagnostics checks a file)", s.name(), m.names(ps), it, s.name()))
		}
	}
	return strings.Join(parts, "\n")
}

// names lists paths relative to the base, the first three by name.
func (m *Manager) names(paths []string) string {
	var out []string
	for i, p := range paths {
		if i == 3 {
			out = append(out, fmt.Sprintf("%d more", len(paths)-3))
			break
		}
		out = append(out, relTo(m.base, p))
	}
	return strings.Join(out, ", ")
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
