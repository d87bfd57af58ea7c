package acp

import (
	"context"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// titleCommand reads "/title NEW TITLE", the user renaming the session;
// ok is false for any other prompt.
func titleCommand(prompt string) (title string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(prompt), "/title")
	if !found || rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n' {
		return "", false
	}
	return strings.Join(strings.Fields(rest), " "), true
}

// retitle renames the session for the editor's list and stores it.
func (s *session) retitle(ctx context.Context, title string) {
	s.engine.Retitle(title)
	s.save()
	s.info(ctx, title, time.Now())
}

// info is a session_info_update: the title when not "", the time of the
// last activity when not zero. Titles go to every client (ACP stable);
// session/list answers the same ones from the store.
func (s *session) info(ctx context.Context, title string, at time.Time) {
	u := &sdk.SessionSessionInfoUpdate{SessionUpdate: "session_info_update"}
	if title != "" {
		u.Title = sdk.Ptr(title)
	}
	if !at.IsZero() {
		u.UpdatedAt = sdk.Ptr(at.UTC().Format(time.RFC3339))
	}
	s.update(ctx, sdk.SessionUpdate{SessionInfoUpdate: u})
}
