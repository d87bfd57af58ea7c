package tools

import (
	"context"
	"io/fs"
)

// Env is the world a tool runs in. The disk implementation is the default;
// the ACP front end wraps it to read unsaved editor buffers, write through
// the editor and ask permission in the editor. The engine wraps it once more
// per call so that approvals and progress carry the call's id.
type Env interface {
	// Cwd is the session's working directory (absolute).
	Cwd() string
	// Roots are the workspace roots paths must stay inside (T13).
	Roots() []string
	// ReadFile reads an absolute path.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// WriteFile replaces an absolute path atomically, creating parent
	// directories; mode is used for a new file (an existing file keeps
	// its own).
	WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error
	// Approve asks whether a risky action may go ahead. It returns
	// Allowed=false when the user (or the policy) declined; an error means
	// the question could not be asked (ctx cancelled, client gone).
	Approve(ctx context.Context, req Approval) (Decision, error)
	// Progress shows a line of progress for the running call.
	Progress(text string)
	// Reads is the session's read-before-write tracker (T5).
	Reads() *ReadTracker
}

// Approval describes a risky action for a permission prompt.
type Approval struct {
	// CallID is the tool call's id; the engine fills it in.
	CallID string
	Tool   string
	Kind   Kind
	Title  string
	// Key is what an "always" answer is remembered by: the tool name, or
	// for bash the command prefix ("git status").
	Key string
	// Subject is what permission rules match: the command for bash, the
	// path relative to the workspace for file tools.
	Subject   string
	Diffs     []Diff
	Locations []Location
	// Input is the raw arguments, shown by clients that display them.
	Input any
}

// Decision is the answer to an Approval.
type Decision struct {
	Allowed bool
	// Reason says why, for the model: "the user declined", "denied by the
	// permissions.deny rule bash:rm*".
	Reason string
}
