package acp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// editorEnv is the Env of an ACP session: the base (disk) environment,
// with files seen through the editor when it offers fs/* and
// permission asked in the editor through session/request_permission,
// reusing the tool call's id.
type editorEnv struct {
	tools.Env
	files tools.Files
	// terminal: the client advertised terminal/* (bash runs there).
	terminal bool
	policy   *permit.Policy
	s        *session
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

// answers maps the option ids to the answers they give.
var answers = map[string]permit.Answer{
	optAllowOnce: permit.AllowOnce, optAllowAlways: permit.AllowAlways,
	optRejectOnce: permit.RejectOnce, optRejectAlways: permit.RejectAlways,
}

// Approve is the policy's one permission flow, with the question rendered
// as session/request_permission.
func (e *editorEnv) Approve(ctx context.Context, req tools.Approval) (tools.Decision, error) {
	return e.policy.Approve(ctx, req, e.ask)
}

// ask renders the question in the editor, reusing the tool call's id.
// A cancelled prompt answers ctx's error.
func (e *editorEnv) ask(ctx context.Context, req tools.Approval) (permit.Answer, error) {
	conn := e.s.agent.connection()
	if conn == nil {
		return 0, fmt.Errorf("%w: no editor is connected", permit.ErrNoOneToAsk)
	}
	tc := sdk.ToolCallUpdate{
		ToolCallId: sdk.ToolCallId(req.CallID),
		Title:      sdk.Ptr(strings.ReplaceAll(permit.Shown(req.Title), "\n", "⏎")),
		Kind:       sdk.Ptr(toolKind(req.Kind)),
		Status:     sdk.Ptr(sdk.ToolCallStatusPending),
		Locations:  locations(req.Locations),
		Content:    content(req.Diffs, permit.Shown(req.Detail)),
	}
	if req.Input != nil {
		tc.RawInput = req.Input
	}
	resp, err := conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: e.s.id, ToolCall: tc, Options: permissionOptions,
	})
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, err
	}
	if resp.Outcome.Cancelled != nil || resp.Outcome.Selected == nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, errors.New("the permission prompt was cancelled")
	}
	return answers[string(resp.Outcome.Selected.OptionId)], nil // an unknown id refuses
}
