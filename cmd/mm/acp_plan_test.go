package main

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
)

// TestACPPlan (T8): a plan tool call reaches the editor as a plan update
// with the same entries, in order.
func TestACPPlan(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "plan")
	p := w.session()
	p.turn("fix the loop in main.go")
	updates := p.Updates()
	var plans []*sdk.SessionUpdatePlan
	for _, u := range updates {
		if u.Plan != nil {
			plans = append(plans, u.Plan)
		}
	}
	if len(plans) != 1 {
		t.Fatalf("got %d plan updates, want 1:\n%s", len(plans), strings.Join(acptest.Describe(updates), "\n"))
	}
	want := []sdk.PlanEntry{
		{Content: "read main.go", Status: sdk.PlanEntryStatusCompleted, Priority: sdk.PlanEntryPriorityMedium},
		{Content: "fix the loop", Status: sdk.PlanEntryStatusInProgress, Priority: sdk.PlanEntryPriorityMedium},
		{Content: "run the tests", Status: sdk.PlanEntryStatusPending, Priority: sdk.PlanEntryPriorityMedium},
	}
	got := plans[0].Entries
	if len(got) != len(want) {
		t.Fatalf("entries = %+v", got)
	}
	for i := range want {
		if got[i].Content != want[i].Content || got[i].Status != want[i].Status || got[i].Priority != want[i].Priority {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if r := lastMessage(w.srv); r.Role != "tool" || !strings.Contains(r.Content, "plan updated: 3 steps, 1 completed") {
		t.Errorf("the model got %q", r.Content)
	}
}
