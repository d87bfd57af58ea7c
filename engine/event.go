package engine

import (
	"encoding/json"

	"github.com/mm-agent/mm/tools"
)

// Event is one thing that happened during a turn. The set is closed: front
// ends switch on these types, never on tool names.
type Event interface{ event() }

// Text is a piece of the answer. Message names the assistant message it
// belongs to: the pieces of one model call share it, so a front end can
// tell two answers of one turn apart (ACP's messageId).
type Text struct{ Text, Message string }

// Thought is a piece of the model's reasoning (shown, never stored), with
// the message id of the model call that reasoned.
type Thought struct{ Text, Message string }

// ToolStatus is the lifecycle of a tool call, as ACP names it.
type ToolStatus string

// Tool call states.
const (
	ToolPending    ToolStatus = "pending"
	ToolInProgress ToolStatus = "in_progress"
	ToolCompleted  ToolStatus = "completed"
	ToolFailed     ToolStatus = "failed"
)

// ToolStarted announces a tool call before it runs (status pending).
type ToolStarted struct {
	ID        string // unique in the session
	Name      string
	Title     string
	Kind      tools.Kind
	Input     json.RawMessage
	Locations []tools.Location
}

// ToolUpdated reports a change of a running call: its status, or a line
// of progress.
type ToolUpdated struct {
	ID       string
	Status   ToolStatus // "" when unchanged
	Progress string
}

// ToolFinished reports the end of a call.
type ToolFinished struct {
	ID     string
	Status ToolStatus // completed or failed
	Result tools.Result
	// Preview is the first lines of the output, shown to the user before
	// the model sees it.
	Preview string
}

// PlanEntry is one item of the model's todo list.
type PlanEntry struct {
	Content  string
	Status   string // pending, in_progress, completed
	Priority string // high, medium, low
}

// Plan is the model's current todo list.
type Plan struct{ Entries []PlanEntry }

// Usage reports the server's counts after a model call.
type Usage struct {
	// Used is the tokens in context after the call (prompt + completion).
	Used int
	// Size is the context window, 0 when unknown.
	Size int
	// This call's counts.
	Prompt, Completion, Cached int
}

// Steered is a message the user sent while the turn ran, as the model
// now reads it (after the preGeneration hooks), in its place in the
// conversation; Message is its id.
type Steered struct{ Text, Message string }

// Progress is a line about what the model server is doing before it
// answers ("Reading the prompt 12.0k/25.3k tokens").
type Progress struct{ Text string }

// Level of a struggle.
type Level int

// Struggle levels.
const (
	// Warning: the turn goes on (loop warned, broken call returned…).
	Warning Level = iota + 1
	// Severe: the turn was stopped (stuck, stalled, server error…).
	Severe
	// Info: mm did something on its own and it worked (earlier turns
	// summarised, an overflow recovered): worth knowing, nothing to fix.
	// A front end without levels shows it as a warning, as before.
	Info
)

// Struggle says the model is struggling; it is shown, never stored.
type Struggle struct {
	Level Level
	Kind  string // loop, stuck, stalled, server_error, max_turns, empty_answer…
	Text  string // short human line
}

// StopReason says why a turn ended, in ACP's vocabulary.
type StopReason string

// Stop reasons.
const (
	EndTurn   StopReason = "end_turn"
	MaxTokens StopReason = "max_tokens"
	MaxTurns  StopReason = "max_turn_requests"
	Refusal   StopReason = "refusal"
	Cancelled StopReason = "cancelled"
	// Failed is not an ACP reason: the turn broke (a server error, a loop detected);
	// TurnEnd.Err says why in one line.
	Failed StopReason = "failed"
)

// TurnEnd is the last event of a turn.
type TurnEnd struct {
	Reason StopReason
	// Err is the one-line explanation when Reason is Failed.
	Err string
	// Turn totals.
	Prompt, Completion, Cached int
}

// Compaction is one summary of earlier turns, automatic or /compact, as
// it goes: first InProgress, then Completed (with the summary the model
// will now remember and the prompt size before and after), Failed (Err)
// or Cancelled, under the same ID. Front ends that cannot show it keep
// the notes and progress lines that come with it.
type Compaction struct {
	ID            string
	Status        CompactionStatus
	Summary       string
	Before, After int // estimated prompt tokens
	Turns         int // turns summarised
	Err           string
}

// CompactionStatus is where a compaction is.
type CompactionStatus string

// The statuses of a compaction (those of ACP's compaction_update).
const (
	CompactionInProgress CompactionStatus = "in_progress"
	CompactionCompleted  CompactionStatus = "completed"
	CompactionFailed     CompactionStatus = "failed"
	CompactionCancelled  CompactionStatus = "cancelled"
)

func (Compaction) event()   {}
func (Text) event()         {}
func (Thought) event()      {}
func (ToolStarted) event()  {}
func (ToolUpdated) event()  {}
func (ToolFinished) event() {}
func (Plan) event()         {}
func (Usage) event()        {}
func (Progress) event()     {}
func (Steered) event()      {}
func (Struggle) event()     {}
func (TurnEnd) event()      {}
