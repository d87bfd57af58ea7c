package files

import (
	"context"
	_ "embed"
	"strings"

	"github.com/mm-agent/mm/fileedit"
	"github.com/mm-agent/mm/tools"
)

//go:embed edit.md
var editDesc string

type editParams struct {
	Path   string `json:"path" desc:"file path, relative to the workspace"`
	Edits  []edit `json:"edits" desc:"replacements, all applied to the file as it is now"`
	DryRun bool   `json:"dry_run,omitempty" desc:"show the diff without writing"`
}

type edit struct {
	Old string `json:"old" desc:"exact text to replace, copied from the file"`
	New string `json:"new" desc:"replacement text"`
}

func editTool(opts Options) tools.Tool {
	return tools.New(tools.Spec[editParams]{
		Name:        "edit_file",
		Description: strings.TrimSpace(editDesc),
		Kind:        tools.KindEdit,
		Caps:        tools.Reads | tools.WritesWorkspace,
		Describe: func(env tools.Env, p editParams) tools.Call {
			return describePath(env, "Edit", p.Path, 0)
		},
		Preflight: func(ctx context.Context, env tools.Env, path string) string {
			_, _, _, refusal := target(ctx, env, path, true)
			return refusal
		},
		Run: func(ctx context.Context, env tools.Env, p editParams) (tools.Result, error) {
			if len(p.Edits) == 0 {
				return tools.Errorf(`[error: "edits" is empty — give at least one {"old": "...", "new": "..."}]`), nil
			}
			abs, current, _, refusal := target(ctx, env, p.Path, true)
			if refusal != "" {
				return tools.Errorf("%s", refusal), nil
			}
			edits := make([]fileedit.Edit, len(p.Edits))
			for i, e := range p.Edits {
				edits[i] = fileedit.Edit{Old: e.Old, New: e.New}
			}
			out, err := fileedit.ApplyFile(p.Path, current, edits)
			if err != nil {
				return tools.Errorf("%s", err.Error()), nil
			}
			old := string(current)
			if p.DryRun {
				diff := tools.Diff{Path: abs, Old: &old, New: string(out.Content)}
				return tools.Result{
					Text:  "[dry run: " + p.Path + " not written]\n" + out.Summary + "\n" + fileedit.Diff(p.Path, current, out.Content),
					Diffs: []tools.Diff{diff},
				}, nil
			}
			return commit(ctx, env, opts, change{tool: "edit_file", verb: "Edit", abs: abs, rel: p.Path, old: &old, new: out.Content, summary: out.Summary})
		},
	})
}
