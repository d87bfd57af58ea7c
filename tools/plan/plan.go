// Package plan holds the plan tool: the model keeps a short todo
// list, each call replacing the whole list, which the front ends show (an
// ACP plan update in the editor, a compact list in line mode).
package plan

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/mm-agent/mm/tools"
)

//go:embed plan.md
var desc string

type entry struct {
	Content string `json:"content" desc:"the step, in a few words"`
	Status  string `json:"status" enum:"pending,in_progress,completed"`
}

type params struct {
	Entries []entry `json:"entries" desc:"the whole list, in order"`
}

// New returns the plan tool.
func New() tools.Tool {
	return tools.New(tools.Spec[params]{
		Name:        "plan",
		Description: strings.TrimSpace(desc),
		Kind:        tools.KindThink,
		Caps:        tools.Reads, // the todo list only: no file, no program
		Describe: func(tools.Env, params) tools.Call {
			return tools.Call{Title: "Plan"}
		},
		Run: func(_ context.Context, _ tools.Env, p params) (tools.Result, error) {
			return run(p), nil
		},
	})
}

func run(p params) tools.Result {
	if len(p.Entries) == 0 {
		return tools.Errorf(`[error: "entries" is empty — send the whole list, e.g. {"entries": [{"content": "read main.go", "status": "in_progress"}, {"content": "fix the bug", "status": "pending"}]}]`)
	}
	plan := make([]tools.PlanEntry, 0, len(p.Entries))
	done := 0
	for i, e := range p.Entries {
		content := strings.TrimSpace(e.Content)
		if content == "" {
			return tools.Errorf(`[error: entry %d has no "content" — say the step in a few words]`, i+1)
		}
		switch e.Status {
		case "pending", "in_progress":
		case "completed":
			done++
		default:
			return tools.Errorf(`[error: entry %d has status %q — use "pending", "in_progress" or "completed"]`, i+1, e.Status)
		}
		plan = append(plan, tools.PlanEntry{Content: content, Status: e.Status})
	}
	return tools.Result{
		Text: fmt.Sprintf("[plan updated: %d steps, %d completed]", len(plan), done),
		Plan: plan,
	}
}
