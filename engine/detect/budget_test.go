package detect

import (
	"strings"
	"testing"
)

func TestToolBudget(t *testing.T) {
	b := ToolBudget{Threshold: DefaultToolBudget}
	steps := map[int]int{0: 0, 23: 0, 24: 1, 35: 1, 36: 2, 47: 2, 48: 3, 200: 3}
	for calls, want := range steps {
		if got := b.Step(calls); got != want {
			t.Errorf("Step(%d) = %d, want %d", calls, got, want)
		}
		if (b.Reminder(calls) == "") != (want == 0) {
			t.Errorf("Reminder(%d) = %q", calls, b.Reminder(calls))
		}
	}
	if r := b.Reminder(24); !strings.Contains(r, "24 tool calls") {
		t.Errorf("%q", r)
	}
	// Firmer at each step: three different texts.
	if b.Reminder(24)[:30] == b.Reminder(36)[:30] || b.Reminder(36)[:30] == b.Reminder(48)[:30] {
		t.Error("each step should read differently")
	}
	off := ToolBudget{}
	if off.Step(1000) != 0 || off.Reminder(1000) != "" {
		t.Error("a zero threshold is off")
	}
	if (ToolBudget{Threshold: 1}).Step(3) != 3 {
		t.Error("a threshold of 1 still steps")
	}
}
