package acptest

import (
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// Describe renders updates one a line, for order assertions and logs:
// "message: TEXT", "thought: TEXT", "tool_call ID KIND STATUS "TITLE"",
// "tool_call_update ID [STATUS] [diff:BASE] [text]", "usage USED/SIZE",
// "other".
func Describe(us []sdk.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		switch {
		case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
			out = append(out, "message: "+u.AgentMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil && u.AgentThoughtChunk.Content.Text != nil:
			out = append(out, "thought: "+u.AgentThoughtChunk.Content.Text.Text)
		case u.ToolCall != nil:
			out = append(out, fmt.Sprintf("tool_call %s %s %s %q", u.ToolCall.ToolCallId, u.ToolCall.Kind, u.ToolCall.Status, u.ToolCall.Title))
		case u.ToolCallUpdate != nil:
			out = append(out, describeCallUpdate(u.ToolCallUpdate))
		case u.UsageUpdate != nil:
			out = append(out, fmt.Sprintf("usage %d/%d", u.UsageUpdate.Used, u.UsageUpdate.Size))
		default:
			out = append(out, "other")
		}
	}
	return out
}

func describeCallUpdate(u *sdk.SessionToolCallUpdate) string {
	s := fmt.Sprintf("tool_call_update %s", u.ToolCallId)
	if u.Status != nil {
		s += " " + string(*u.Status)
	}
	for _, c := range u.Content {
		switch {
		case c.Diff != nil:
			s += " diff:" + filepath.Base(c.Diff.Path)
		case c.Content != nil:
			s += " text"
		}
	}
	return s
}

// MessageText joins the text of the agent's message chunks.
func MessageText(us []sdk.SessionUpdate) string {
	return joinText(us, func(u sdk.SessionUpdate) *sdk.ContentBlock {
		if u.AgentMessageChunk == nil {
			return nil
		}
		return &u.AgentMessageChunk.Content
	})
}

// ThoughtText joins the text of the agent's thought chunks.
func ThoughtText(us []sdk.SessionUpdate) string {
	return joinText(us, func(u sdk.SessionUpdate) *sdk.ContentBlock {
		if u.AgentThoughtChunk == nil {
			return nil
		}
		return &u.AgentThoughtChunk.Content
	})
}

// UserText joins the text of the user's message chunks: what a replay
// shows of the user's prompts.
func UserText(us []sdk.SessionUpdate) string {
	return joinText(us, func(u sdk.SessionUpdate) *sdk.ContentBlock {
		if u.UserMessageChunk == nil {
			return nil
		}
		return &u.UserMessageChunk.Content
	})
}

// joinText joins the text of the chunks chunk finds in updates (nil: the
// update is not of its kind).
func joinText(us []sdk.SessionUpdate, chunk func(sdk.SessionUpdate) *sdk.ContentBlock) string {
	var b strings.Builder
	for _, u := range us {
		if c := chunk(u); c != nil && c.Text != nil {
			b.WriteString(c.Text.Text)
		}
	}
	return b.String()
}
