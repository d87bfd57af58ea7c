package tools

import (
	"context"
	"encoding/json"
)

// Kind says what a tool call does, in the vocabulary of ACP tool kinds, so
// front ends can pick an icon without knowing tool names.
type Kind string

// The kinds a tool can have; they mirror ACP's ToolKind values.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindDelete  Kind = "delete"
	KindMove    Kind = "move"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindThink   Kind = "think"
	KindFetch   Kind = "fetch"
	KindOther   Kind = "other"
)

// Tool is one capability offered to the model.
//
// Run returns a Result for everything the model can act on (including
// failures, with IsError set); it returns an error only when the world broke
// (a process could not start, the disk is full) or ctx was cancelled.
type Tool interface {
	Name() string
	// Description is sent to the model verbatim; it must be byte-stable.
	Description() string
	// Schema is the JSON schema of the arguments; it must be byte-stable.
	Schema() json.RawMessage
	Kind() Kind
	// Caps is everything a call of the tool may do (a call's approval
	// declares what that call does, within it). Zero is refused.
	Caps() Caps
	// Describe gives what the user sees before the call runs: a short title
	// and the files it touches. args may be invalid; Describe must not fail.
	Describe(env Env, args json.RawMessage) Call
	Run(ctx context.Context, env Env, args json.RawMessage) (Result, error)
}

// Call is how a tool call is presented to the user before it runs.
type Call struct {
	Title     string
	Locations []Location
}

// Result is what a tool call produced.
type Result struct {
	// Text is what the model receives as the tool result.
	Text string
	// IsError marks a failed call; Text then says how to fix it.
	IsError bool
	// Diffs are the file changes the call made (or would make, for a
	// dry run), for the editor to show.
	Diffs []Diff
	// Locations are the files (and lines) the call touched, for the editor
	// to follow along.
	Locations []Location
	// Plan, when set, replaces the model's todo list (the plan tool);
	// front ends show it.
	Plan []PlanEntry
	// Warning, when set, is one line for the user (a ⚠ note), not for the
	// model: something outside the model's reach broke (an MCP server
	// crashed or hung).
	Warning string
}

// PlanEntry is one step of the model's todo list.
type PlanEntry struct {
	Content string
	Status  string // pending, in_progress, completed
}

// Diff is one file change. Old is nil when the file did not exist.
type Diff struct {
	Path string // absolute
	Old  *string
	New  string
}

// Location is a place in a file. Line is 1-based; 0 means the whole file.
type Location struct {
	Path string // absolute
	Line int
}

// Preflighter is implemented by tools that can refuse a call as soon as its
// path is known, while the model is still streaming the rest of the
// arguments: a refused write costs no more decoding. It returns the
// refusal text, or "" when the call may go on. ctx is the turn's: a
// preflight that reads through the editor stops with the turn.
type Preflighter interface {
	Preflight(ctx context.Context, env Env, path string) string
}

// Errorf builds a failed Result whose text is a repair instruction.
func Errorf(format string, args ...any) Result {
	return Result{Text: sprintf(format, args...), IsError: true}
}
