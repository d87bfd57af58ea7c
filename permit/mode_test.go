package permit_test

import (
	"testing"

	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// TestModes is the table of modes: what each mode lets through without a question
// ("ask" means the user is asked).
func TestModes(t *testing.T) {
	edit := tools.Approval{Tool: "edit_file", Kind: tools.KindEdit, Caps: tools.WritesWorkspace, Key: "edit_file", Subject: "a.go"}
	write := tools.Approval{Tool: "write_file", Kind: tools.KindEdit, Caps: tools.WritesWorkspace, Key: "write_file", Subject: "new.go"}
	bash := tools.Approval{Tool: "bash", Kind: tools.KindExecute, Caps: tools.RunsPrograms, Key: "go test", Subject: "go test ./..."}
	fetch := tools.Approval{Tool: "fetch", Kind: tools.KindFetch, Caps: tools.Network, Key: "fetch", Subject: "https://x"}
	save := tools.Approval{Tool: "fetch", Kind: tools.KindFetch, Caps: tools.Network | tools.WritesWorkspace, Key: "fetch", Subject: "https://x"}
	mcp := tools.Approval{Tool: "srv_tool", Kind: tools.KindOther, Caps: tools.Anything, Key: "srv_tool", Subject: "{}"}
	undeclared := tools.Approval{Tool: "new_tool", Kind: tools.KindRead, Key: "new_tool", Subject: "x"}
	want := map[permit.Mode][7]string{ // edit, write, bash, fetch, fetch+save, mcp, undeclared
		permit.ModeAsk:         {"ask", "ask", "ask", "ask", "ask", "ask", "refuse"},
		permit.ModeAcceptEdits: {"allow", "allow", "ask", "ask", "ask", "ask", "refuse"},
		permit.ModePlan:        {"refuse", "refuse", "refuse", "ask", "refuse", "refuse", "refuse"},
		permit.ModeYolo:        {"allow", "allow", "allow", "allow", "allow", "allow", "refuse"},
	}
	for _, m := range permit.Modes {
		p := permit.NewPolicy(false, nil, nil)
		p.SetMode(m)
		for i, a := range []tools.Approval{edit, write, bash, fetch, save, mcp, undeclared} {
			d, ok := p.Decide(a)
			got := "ask"
			if ok {
				got = map[bool]string{true: "allow", false: "refuse"}[d.Allowed]
			}
			if got != want[m][i] {
				t.Errorf("%s / %s: %s (%s), want %s", m, a.Tool, got, d.Reason, want[m][i])
			}
		}
	}
	// Plan mode wins over an allow rule and an "always" answer; a deny
	// rule and a "never" answer win over accept-edits.
	p := permit.NewPolicy(false, []string{"bash"}, []string{"write_file:new.go"})
	p.Remember(edit, true)
	p.SetMode(permit.ModePlan)
	for _, a := range []tools.Approval{edit, bash} {
		if d, ok := p.Decide(a); !ok || d.Allowed {
			t.Errorf("plan let %s through: %+v", a.Tool, d)
		}
	}
	p.SetMode(permit.ModeAcceptEdits)
	if d, ok := p.Decide(write); !ok || d.Allowed {
		t.Errorf("deny rule lost to accept-edits: %+v", d)
	}
	p.Remember(edit, false)
	if d, ok := p.Decide(edit); !ok || d.Allowed {
		t.Errorf("never lost to accept-edits: %+v", d)
	}
	if permit.NewPolicy(true, nil, nil).Mode() != permit.ModeYolo {
		t.Errorf("yolo: true does not start in yolo mode")
	}
}

// TestPersistRecall: answers go to the persist hook and come back.
func TestPersistRecall(t *testing.T) {
	var saved []string
	p := permit.NewPolicy(false, nil, nil)
	p.Persist(func(a tools.Approval, allowed bool) { saved = append(saved, a.Key) })
	p.Remember(tools.Approval{Tool: "bash", Key: "make"}, true)
	if len(saved) != 1 || saved[0] != "make" {
		t.Errorf("persisted %v", saved)
	}
	q := permit.NewPolicy(false, nil, nil)
	q.Recall("bash", "make", false)
	if d, ok := q.Decide(tools.Approval{Tool: "bash", Kind: tools.KindExecute, Caps: tools.RunsPrograms, Key: "make"}); !ok || d.Allowed {
		t.Errorf("recalled never: %+v", d)
	}
	if _, ok := permit.ParseMode("nope"); ok {
		t.Errorf("ParseMode accepted nope")
	}
}

// TestUndeclaredToolRefused: a tool that does not say what it does is a
// programming error caught when it is built, and an approval that
// declares nothing is refused in every mode, yolo included.
func TestUndeclaredToolRefused(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("tools.New accepted a tool without capabilities")
		}
	}()
	tools.New(tools.Spec[struct{}]{Name: "new_tool", Description: "d", Kind: tools.KindRead})
}
