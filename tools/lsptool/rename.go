package lsptool

import (
	"context"
	"fmt"
	"strings"

	"github.com/mm-agent/mm/fileedit"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/tools"
)

// rename asks the server for the edit, shows it for permission, writes it
// to all files or none, and reports the diffs and the diagnostics delta.
func (t *tool) rename(ctx context.Context, env tools.Env, p Params) (tools.Result, error) {
	newName := strings.TrimSpace(p.NewName)
	if newName == "" {
		return tools.Errorf(`[error: lsp rename needs "new_name": the name to give %s]`, nameOf(env, p)), nil
	}
	pos, bad := t.position(env, p)
	if bad != "" {
		return tools.Errorf("%s", bad), nil
	}
	changes, err := t.m.Rename(ctx, pos, newName)
	if err != nil {
		return failed(p.Operation, err), nil
	}
	for _, c := range changes {
		if _, err := tools.Resolve(env, c.Path); err != nil {
			return tools.Errorf("[error: lsp rename would change %s, outside the workspace — nothing was changed]", c.Path), nil
		}
	}
	diffs, locs, shown := t.present(env, changes)
	name := nameOf(env, p)
	title := fmt.Sprintf("Rename %s to %s (%s)", name, newName, count(len(changes), "file"))
	d, err := env.Approve(ctx, tools.Approval{
		Tool: "lsp", Kind: tools.KindEdit, Caps: tools.WritesWorkspace, Title: title, Key: "lsp",
		Subject: tools.Rel(env, changes[0].Path), Diffs: diffs, Locations: locs, Input: p,
	})
	if err != nil {
		return tools.Result{}, err
	}
	if !d.Allowed {
		return tools.Errorf("[error: %s was not renamed: %s. Do not retry the same change; ask the user what they want instead]", name, d.Reason), nil
	}
	// The files are checked again after the prompt (all before any is
	// written), and each right before its write.
	for _, c := range changes {
		if err := tools.Unchanged(ctx, env, c.Path, tools.Rel(env, c.Path), c.Old, true); err != nil {
			return tools.Errorf("[error: %s was not renamed: %v]", name, err), nil
		}
	}
	report, err := t.m.Apply(ctx, changes, func(path string, old, data []byte) error {
		return tools.WriteIfUnchanged(ctx, env, path, tools.Rel(env, path), old, true, data, 0o644)
	})
	if err != nil {
		return tools.Errorf("[error: the rename was not applied: %v — every file is unchanged]", err), nil
	}
	for _, c := range changes {
		env.Reads().Record(c.Path, c.New)
	}
	text := fmt.Sprintf("renamed %s to %s in %s:\n%s", name, newName, count(len(changes), "file"), shown)
	if report != "" {
		text = strings.TrimRight(text, "\n") + "\n" + report
	}
	return tools.Result{Text: text, Diffs: diffs, Locations: locs}, nil
}

// present builds the diffs for the editor, the locations of the first
// change of each file, and the diff text for the model.
func (t *tool) present(env tools.Env, changes []lspbridge.FileChange) ([]tools.Diff, []tools.Location, string) {
	var diffs []tools.Diff
	var locs []tools.Location
	var b strings.Builder
	for _, c := range changes {
		old := string(c.Old)
		diffs = append(diffs, tools.Diff{Path: c.Path, Old: &old, New: string(c.New)})
		locs = append(locs, tools.Location{Path: c.Path, Line: firstChangedLine(c.Old, c.New)})
		b.WriteString(strings.TrimRight(fileedit.Diff(tools.Rel(env, c.Path), c.Old, c.New), "\n"))
		b.WriteByte('\n')
	}
	return diffs, locs, b.String()
}

// firstChangedLine is the 1-based line where old and new first differ.
func firstChangedLine(old, new []byte) int {
	line := 1
	for i := 0; i < len(old) && i < len(new) && old[i] == new[i]; i++ {
		if old[i] == '\n' {
			line++
		}
	}
	return line
}
