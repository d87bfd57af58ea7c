package lspbridge

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// Diagnostics returns the problems (errors and warnings) known for path:
// for a file, once the server holds its text from disk and has answered
// for it; for a directory, those the servers covering it have reported
// once they are idle. note says what the list may lack ("" when nothing):
// an answer not received in time, or a server that reports only the files
// mm opened.
func (m *Manager) Diagnostics(ctx context.Context, path string) (list []Diagnostic, note string, err error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.wait())
	defer cancel()
	start := time.Now()
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return m.dirDiagnostics(ctx, start, canonical(path))
	}
	path = canonical(path)
	s, _, text, err := m.open(ctx, path)
	if err != nil {
		return nil, "", err
	}
	p, err := s.syncDoc(ctx, path, text)
	if err != nil {
		return nil, "", err
	}
	if !s.waitFor(ctx, []*pending{p}) {
		note = fmt.Sprintf("diagnostics incomplete after %d ms: %s did not answer in time", time.Since(start).Milliseconds(), s.name())
	}
	list = problems(s.snapshotDiags()[path])
	sortByPlace(list)
	return list, note, nil
}

func (m *Manager) dirDiagnostics(ctx context.Context, start time.Time, dir string) ([]Diagnostic, string, error) {
	servers, err := m.serversFor(dir)
	if err != nil {
		return nil, "", err
	}
	var list []Diagnostic
	var note string
	for _, s := range servers {
		if _, err := s.ready(ctx); err != nil || !s.waitIdle(ctx) {
			note = fmt.Sprintf("diagnostics incomplete after %d ms: %s is still working", time.Since(start).Milliseconds(), s.name())
		}
		for p, ds := range s.snapshotDiags() {
			if within(dir, p) {
				list = append(list, problems(ds)...)
			}
		}
		if !s.cfg.Workspace && note == "" {
			note = s.name() + " reports only the files mm has opened; ask for a file to check it"
		}
	}
	sortByPlace(list)
	return list, note, nil
}

func sortByPlace(ds []Diagnostic) {
	slices.SortFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Severity, b.Severity), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}
