package detect

import "fmt"

// DefaultToolBudget is the soft tool budget of a turn (config
// `toolBudget: 24`). From the sibling agent (Loki): an hour-long turn of
// ~50 calls on a heavily quantised model went round in circles, reading the
// same file slice by slice, which no deduplication catches.
const DefaultToolBudget = 24

// ToolBudget is the soft budget of tool calls in one turn. It never
// cuts anything: past the threshold, a reminder of the count goes at the
// END of the request (after the last message, not persisted), so the
// cached prefix of the conversation stays intact on the server. The
// reminder gets firmer at each step: the threshold, then every half
// threshold (24, 36, 48 by default), the last wording from 48 on.
type ToolBudget struct {
	// Threshold is the number of calls from which the reminder is sent;
	// 0 (or less) turns the budget off.
	Threshold int
}

// Step is 0 below the threshold (or when off), then 1, 2, 3 as calls
// grows; it never goes past 3.
func (b ToolBudget) Step(calls int) int {
	if b.Threshold <= 0 || calls < b.Threshold {
		return 0
	}
	half := max(b.Threshold/2, 1)
	return min(1+(calls-b.Threshold)/half, 3)
}

// Reminder is the text to append at the end of the next request after
// calls tool calls in this turn, or "" when none is due.
func (b ToolBudget) Reminder(calls int) string {
	switch b.Step(calls) {
	case 1:
		return fmt.Sprintf("[reminder: you have made %d tool calls in this turn. If the task is done, stop calling tools and answer.]", calls)
	case 2:
		return fmt.Sprintf("[reminder: %d tool calls in this turn. Finish now: make only the calls you still need, then answer.]", calls)
	case 3:
		return fmt.Sprintf("[reminder: %d tool calls in this turn. Stop calling tools: answer now with what you did and what remains.]", calls)
	}
	return ""
}

// Struggle is the warning to report when Step changes (not at every
// call): the user learns the turn is long and the model was reminded.
func (b ToolBudget) Struggle(calls int) Struggle {
	return Struggle{Warning, KindToolBudget, fmt.Sprintf("tool budget: %d tool calls this turn — the model was asked to wrap up", calls)}
}
