package acp

import (
	"context"
	"errors"
	"io/fs"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/tools"
)

// editorEnv is the Env of an ACP session: the base (disk) environment,
// with files seen through the editor when it offers fs/* (A8) and
// permission asked in the editor through session/request_permission,
// reusing the tool call's id (A4).
type editorEnv struct {
	tools.Env
	files  tools.Files
	policy *tools.Policy
	s      *session
}

// ReadFile implements tools.Files through the session's view.
func (e *editorEnv) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return e.files.ReadFile(ctx, path)
}

// WriteFile implements tools.Files through the session's view.
func (e *editorEnv) WriteFile(ctx context.Context, path string, data []byte, mode fs.FileMode) error {
	return e.files.WriteFile(ctx, path, data, mode)
}

// The option ids sent with every permission request.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)

var permissionOptions = []sdk.PermissionOption{
	{OptionId: optAllowOnce, Name: "Allow", Kind: sdk.PermissionOptionKindAllowOnce},
	{OptionId: optAllowAlways, Name: "Always allow", Kind: sdk.PermissionOptionKindAllowAlways},
	{OptionId: optRejectOnce, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
	{OptionId: optRejectAlways, Name: "Always reject", Kind: sdk.PermissionOptionKindRejectAlways},
}

// Approve applies the policy (yolo, rules, earlier "always" answers) and
// otherwise asks the editor. A cancelled prompt answers ctx's error.
func (e *editorEnv) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	if d, ok := e.policy.Decide(req); ok {
		return d, nil
	}
	conn := e.s.agent.connection()
	if conn == nil {
		return tools.Decision{Reason: "no editor is connected to ask"}, nil
	}
	tc := sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(req.CallID),
		Title:      sdk.Ptr(req.Title),
		Kind:       sdk.Ptr(toolKind(req.Kind)),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		Locations:  locations(req.Locations),
		Content:    content(req.Diffs, ""),
	}
	if req.Input != nil {
		tc.RawInput = req.Input
	}
	resp, err := conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: e.s.id, ToolCall: tc, Options: permissionOptions,
	})
	if err != nil {
		if ctx.Err() != nil {
			return tools.Decision{}, ctx.Err()
		}
		return tools.Decision{}, err
	}
	if resp.Outcome.Cancelled != nil || resp.Outcome.Selected == nil {
		if ctx.Err() != nil {
			return tools.Decision{}, ctx.Err()
		}
		return tools.Decision{}, errors.New("the permission prompt was cancelled")
	}
	switch resp.Outcome.Selected.OptionId {
	case optAllowAlways:
		e.policy.Remember(req, true)
		return tools.Decision{Allowed: true, Reason: "the user allowed it for this session"}, nil
	case optAllowOnce:
		return tools.Decision{Allowed: true, Reason: "the user allowed it"}, nil
	case optRejectAlways:
		e.policy.Remember(req, false)
		return tools.Decision{Reason: "the user declined, for the rest of this session"}, nil
	}
	return tools.Decision{Reason: "the user declined"}, nil
}
