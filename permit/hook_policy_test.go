package permit_test

import (
	"testing"

	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// Hooks through the one Policy: a hook's allow only skips the question (a
// deny rule, plan mode and the user's "never" still win); its ask asks
// where a rule, accept-edits or an "always" answer would allow; in yolo
// nothing is asked anyway.
func TestHookOpinions(t *testing.T) {
	rm := tools.Approval{Tool: "bash", Kind: tools.KindExecute, Caps: tools.RunsPrograms, Key: "rm", Subject: "rm x"}
	ls := tools.Approval{Tool: "bash", Kind: tools.KindExecute, Caps: tools.RunsPrograms, Key: "ls", Subject: "ls"}
	edit := tools.Approval{Tool: "edit_file", Kind: tools.KindEdit, Caps: tools.WritesWorkspace, Key: "edit_file", Subject: "a.go"}
	with := func(a tools.Approval, hook tools.HookOpinion) tools.Approval { a.Hook = hook; return a }
	outcome := func(p *permit.Policy, a tools.Approval) string {
		d, ok := p.Decide(a)
		if !ok {
			return "ask"
		}
		return map[bool]string{true: "allow", false: "refuse"}[d.Allowed]
	}
	p := permit.NewPolicy(false, []string{"bash:ls"}, []string{"bash:rm *"})
	for _, c := range []struct {
		a    tools.Approval
		want string
	}{
		{with(ls, ""), "allow"},
		{with(edit, ""), "ask"},
		{with(edit, tools.HookAllow), "allow"},
		{with(rm, tools.HookAllow), "refuse"}, // the deny rule wins
		{with(ls, tools.HookAsk), "ask"},      // ask beats the allow rule
	} {
		if got := outcome(p, c.a); got != c.want {
			t.Errorf("%s %s hook=%q: %s, want %s", c.a.Tool, c.a.Subject, c.a.Hook, got, c.want)
		}
	}
	p.Remember(edit, false) // the user's "never"
	if got := outcome(p, with(edit, tools.HookAllow)); got != "refuse" {
		t.Errorf("a hook's allow overrode the user's never: %s", got)
	}
	q := permit.NewPolicy(false, nil, nil)
	q.Remember(edit, true)
	if got := outcome(q, with(edit, tools.HookAsk)); got != "ask" {
		t.Errorf("ask after an always answer: %s", got)
	}
	q.SetMode(permit.ModeAcceptEdits)
	if got := outcome(q, with(edit, tools.HookAsk)); got != "ask" {
		t.Errorf("ask in accept-edits: %s", got)
	}
	q.SetMode(permit.ModePlan)
	if got := outcome(q, with(edit, tools.HookAllow)); got != "refuse" {
		t.Errorf("a hook's allow in plan mode: %s", got)
	}
	q.SetMode(permit.ModeYolo)
	if got := outcome(q, with(edit, tools.HookAsk)); got != "allow" {
		t.Errorf("yolo asks nothing, even for a hook's ask: %s", got)
	}
}
