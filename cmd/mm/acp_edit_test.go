package main

import (
	"os"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
)

// TestACPRefusedEditThenRepaired (issue 3): a wrong `old` is refused with
// a repair text the model receives in its next request, the file is
// byte-identical after the refusal, and the repaired edit (typed with
// spaces in a tab-indented file) applies with its diff sent to the editor.
func TestACPRefusedEditThenRepaired(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "refused_edit")
	original := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello world\")\n}\n"
	file := w.write("greet.go", original)
	p := w.session()

	// Check the file right after the refused edit: hold the permission
	// answer of the second (valid) edit until we looked.
	release := p.Hold()
	done := p.async("Say bye instead of hello world")
	<-p.Asked() // the permission prompt of the repaired edit
	if got, _ := os.ReadFile(file); string(got) != original {
		t.Errorf("the refused edit changed the file: %q", got)
	}
	release()
	if a := acptest.Await(t, "the repaired edit", done); a.Err != nil {
		t.Fatal(a.Err)
	}

	reqs := w.srv.Requests()
	msgs := reqs[2].Messages
	repair := msgs[len(msgs)-1]
	if repair.Role != "tool" || !strings.Contains(repair.Content, "not found") || !strings.Contains(repair.Content, `fmt.Println("hello world")`) {
		t.Errorf("the model's next request lacks the repair text: %q", repair.Content)
	}
	want := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"bye world\")\n}\n"
	if got := readFile(t, file); got != want {
		t.Errorf("file = %q, want the tab-indented edit", got)
	}
	updates, perms := p.Updates(), p.Permissions()
	if len(perms) != 1 {
		t.Errorf("permission asked %d times, want once (the refused edit asks nothing)", len(perms))
	}
	var sawDiff bool
	for _, u := range updates {
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted {
			for _, c := range u.ToolCallUpdate.Content {
				if c.Diff != nil && c.Diff.NewText == want {
					sawDiff = true
				}
			}
		}
	}
	if !sawDiff {
		t.Errorf("the editor did not get the applied diff:\n%s", strings.Join(acptest.Describe(updates), "\n"))
	}
}
