package lspbridge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"go.lsp.dev/protocol"
)

// Rename asks the server to rename the symbol at pos and returns the new
// content of every file the rename touches. Nothing is written: the
// caller asks permission, then calls Apply.
func (m *Manager) Rename(ctx context.Context, pos Position, newName string) ([]FileChange, error) {
	ctx, cancel := context.WithTimeout(ctx, m.queryWait())
	defer cancel()
	t, err := m.resolve(ctx, pos)
	if err != nil {
		return nil, err
	}
	params := &protocol.RenameParams{TextDocumentPositionParams: t.params(), NewName: newName}
	var edit struct {
		Changes         map[protocol.DocumentURI][]protocol.TextEdit `json:"changes"`
		DocumentChanges []json.RawMessage                            `json:"documentChanges"`
	}
	if err := call(ctx, t.proc, "textDocument/rename", params, &edit); err != nil {
		return nil, err
	}
	byPath := map[string][]protocol.TextEdit{}
	for u, es := range edit.Changes {
		byPath[t.srv.pathOf(u)] = append(byPath[t.srv.pathOf(u)], es...)
	}
	for _, raw := range edit.DocumentChanges {
		var dc struct {
			Kind         string `json:"kind"`
			TextDocument struct {
				URI protocol.DocumentURI `json:"uri"`
			} `json:"textDocument"`
			Edits []protocol.TextEdit `json:"edits"`
		}
		if err := json.Unmarshal(raw, &dc); err != nil {
			return nil, fmt.Errorf("rename: decode edit: %w", err)
		}
		if dc.Kind != "" {
			return nil, fmt.Errorf("the rename needs to %s a file, which mm does not do — rename the file with bash, then rename the symbol", dc.Kind)
		}
		p := t.srv.pathOf(dc.TextDocument.URI)
		byPath[p] = append(byPath[p], dc.Edits...)
	}
	if len(byPath) == 0 {
		return nil, fmt.Errorf("%s cannot rename %s: it returned no edits", t.srv.name(), t.name)
	}
	files := fileCache{ctx: ctx, s: t.srv}
	var out []FileChange
	for path, es := range byPath {
		if path == "" {
			return nil, errors.New("rename: the server edits a file that is not on disk")
		}
		old := files.text(path)
		if old == nil {
			return nil, fmt.Errorf("rename: cannot read %s", relTo(m.base, path))
		}
		n, err := applyTextEdits(old, es)
		if err != nil {
			return nil, fmt.Errorf("rename in %s: %w", relTo(m.base, path), err)
		}
		out = append(out, FileChange{Path: path, Old: old, New: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// applyTextEdits applies LSP edits, which all refer to the original text.
func applyTextEdits(text []byte, edits []protocol.TextEdit) ([]byte, error) {
	type span struct {
		start, end int
		text       string
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		spans = append(spans, span{offsetOf(text, e.Range.Start), offsetOf(text, e.Range.End), e.NewText})
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	var b bytes.Buffer
	at := 0
	for _, s := range spans {
		if s.start < at || s.end < s.start {
			return nil, errors.New("the server sent overlapping edits")
		}
		b.Write(text[at:s.start])
		b.WriteString(s.text)
		at = s.end
	}
	b.Write(text[at:])
	return b.Bytes(), nil
}

// Apply writes changes through write — mm's atomic file writer, which
// writes data only if the file still holds old, so that an edit the user
// made since the changes were computed is never overwritten — and returns
// the diagnostics delta of the whole edit, as After does. A failed write
// restores the files already written (each only if it still holds what
// was written), so the edit is applied to all files or to none.
func (m *Manager) Apply(ctx context.Context, changes []FileChange, write func(path string, old, data []byte) error) (string, error) {
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	snap := m.Before(ctx, paths...)
	snap.Wait(ctx)
	for i, c := range changes {
		if err := write(c.Path, c.Old, c.New); err != nil {
			var errs []error
			for _, done := range changes[:i] {
				if rerr := write(done.Path, done.New, done.Old); rerr != nil {
					errs = append(errs, fmt.Errorf("restore %s: %w", done.Path, rerr))
				}
			}
			snap.Discard()
			return "", errors.Join(append([]error{fmt.Errorf("write %s: %w", relTo(m.base, c.Path), err)}, errs...)...)
		}
	}
	out := make([]Change, len(changes))
	for i, c := range changes {
		out[i] = Change{Path: c.Path, Content: c.New}
	}
	return m.AfterChanges(ctx, snap, out), nil
}
