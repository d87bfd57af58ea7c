package tools

import (
	"context"
	"io/fs"
)

// Files is the one view of files inside mm: every reader and writer —
// the file tools, the read-before-write tracker, the LSP bridge's "before"
// text, rename — goes through the same Files, so an editor buffer and the
// disk can never disagree inside mm. The disk implementation is
// workspace.Disk; the ACP front end reads unsaved buffers with
// fs/read_text_file and writes with fs/write_text_file when the editor
// offers them (so its review list shows every change).
type Files interface {
	// ReadFile reads an absolute path; a missing file is fs.ErrNotExist.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces an absolute path atomically, creating parent
	// directories; mode is used for a new file (an existing file keeps
	// its own).
	WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error
}

// Env is the world a tool runs in. The disk implementation is the default;
// the ACP front end wraps it to read unsaved editor buffers, write through
// the editor and ask permission in the editor. The engine wraps it once more
// per call so that approvals and progress carry the call's id.
type Env interface {
	// Cwd is the session's working directory (absolute).
	Cwd() string
	// Roots are the workspace roots paths must stay inside.
	Roots() []string
	// Files is the session's view of files: read and write only through it.
	Files
	// Approve asks whether a risky action may go ahead. It returns
	// Allowed=false when the user (or the policy) declined; an error means
	// the question could not be asked (ctx cancelled, client gone).
	Approve(ctx context.Context, req Approval) (Decision, error)
	// Progress shows a line of progress for the running call.
	Progress(text string)
	// Reads is the session's read-before-write tracker.
	Reads() *ReadTracker
}

// Approval describes a risky action for a permission prompt.
type Approval struct {
	// CallID is the tool call's id; the engine fills it in.
	CallID string
	Tool   string
	Kind   Kind
	// Caps is what this call may do; the Policy decides from it. Zero is
	// refused: an approval that does not say what it does is never given.
	Caps Caps
	// Title is a one-line honest summary of the action.
	Title string
	// Detail, when set, is shown with the question in full: the whole
	// command, escaped, and what "always" would remember.
	Detail string
	// Key is what an "always" answer is remembered by: the tool name, or
	// the host for fetch_content.
	Key string
	// Subject is what permission rules match: the path relative to the
	// workspace for file tools, the URL for fetch_content.
	Subject string
	// Parts, when set, replace Key and Subject: the pieces of the action
	// that an answer or a rule must each cover (every simple command of a
	// bash line).
	Parts     []Part
	Diffs     []Diff
	Locations []Location
	// Input is the raw arguments, shown by clients that display them.
	Input any
	// Hook is a preToolUse hook's opinion of the call, filled in by
	// the engine: HookAllow skips the question, HookAsk asks even where a
	// rule, a mode or an earlier answer would allow. A hook's deny never
	// gets here: the call does not run.
	Hook HookOpinion
	// RunsLater, when set, says why the action makes a program run code
	// later (git obeying a repository's config); it is then asked in every
	// mode, like a write to such a file (RunsLater).
	RunsLater string
}

// Part is one piece of an action that an answer or a rule must cover on its
// own: one simple command of a command line.
type Part struct {
	// Key is what an "always" answer remembers for this part; "" when no
	// answer may cover it (it is asked each time).
	Key string
	// Rule is what permissions.allow patterns match; "" when no allow
	// rule may cover it.
	Rule string
	// Deny are the forms permissions.deny patterns are matched against
	// (as written, without its wrappers, by the program's bare name); a
	// match on any refuses the whole action.
	Deny []string
	// Unknown says the part's program is computed when it runs ($x,
	// $(…)): no deny rule can be checked against it, so any deny rule of
	// the tool refuses it.
	Unknown bool
}

// HookOpinion is what a preToolUse hook says of a call (the "decision"
// of its JSON answer; package engine/hooks runs the hooks); "" is none.
type HookOpinion string

// The opinions a hook can give a call.
const (
	HookAllow HookOpinion = "allow"
	HookAsk   HookOpinion = "ask"
	HookDeny  HookOpinion = "deny"
)

// Decision is the answer to an Approval.
type Decision struct {
	Allowed bool
	// Asked: the user answered this very action (not a rule, a mode, a
	// hook or an earlier "always"); bash then lets git run the
	// repository's own programs, which nobody saw otherwise.
	Asked bool
	// Reason says why, for the model: "the user declined", "denied by the
	// permissions.deny rule bash:rm*".
	Reason string
}
