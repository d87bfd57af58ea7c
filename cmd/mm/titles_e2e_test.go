package main

import (
	"slices"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/acp/acptest"
)

// infos are the session_info_update updates received, in order.
func infos(us []sdk.SessionUpdate) []sdk.SessionSessionInfoUpdate {
	var out []sdk.SessionSessionInfoUpdate
	for _, u := range us {
		if u.SessionInfoUpdate != nil {
			out = append(out, *u.SessionInfoUpdate)
		}
	}
	return out
}

// TestACPTitles: the title comes from the first prompt's first line, in
// a session_info_update sent before the answer; each turn ends with one
// carrying updatedAt; session/list answers the same title; /title NEW
// renames without a model request, and the name survives later turns and
// a restart (session/load sends it after the replay). Titles are stable
// ACP: a client sees them whatever it advertises. Every message mm wrote
// validates against the 2026-11 schema.
func TestACPTitles(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "titles", "XDG_STATE_HOME="+t.TempDir())
	ctx := w.ctx
	p := w.session()
	id := p.id
	if names := commandsAfterAnswer(t, p, string(id)); !slices.Contains(names, "title") {
		t.Errorf("the / menu lacks title: %v", names)
	}
	before := time.Now().UTC().Add(-time.Second)
	p.turn("Fix the parser\nIt drops the last token.")
	us := p.Updates()
	first, answer := -1, -1
	for i, u := range us {
		if u.SessionInfoUpdate != nil && u.SessionInfoUpdate.Title != nil && first < 0 {
			first = i
		}
		if u.AgentMessageChunk != nil && answer < 0 {
			answer = i
		}
	}
	is := infos(us)
	if first < 0 || *us[first].SessionInfoUpdate.Title != "Fix the parser" || answer >= 0 && first > answer {
		t.Fatalf("no title before the answer: %+v", is)
	}
	last := is[len(is)-1]
	if last.UpdatedAt == nil {
		t.Fatalf("the turn did not end with updatedAt: %+v", is)
	}
	if at, err := time.Parse(time.RFC3339, *last.UpdatedAt); err != nil || at.Before(before) {
		t.Errorf("updatedAt %q (%v)", *last.UpdatedAt, err)
	}
	listed := func() string {
		l, err := p.Conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(w.dir)})
		if err != nil || len(l.Sessions) != 1 || l.Sessions[0].Title == nil {
			t.Fatalf("session/list: %+v, %v", l, err)
		}
		return *l.Sessions[0].Title
	}
	if got := listed(); got != "Fix the parser" {
		t.Errorf("session/list title %q", got)
	}

	p.endTurn("/title Parser rewrite")
	if n := len(w.srv.Requests()); n != 1 {
		t.Errorf("/title asked the model (%d requests)", n)
	}
	p.WaitUpdates("the new title", titled("Parser rewrite"))
	if got := listed(); got != "Parser rewrite" {
		t.Errorf("session/list after /title: %q", got)
	}
	if _, err := p.prompt("/title"); err == nil {
		t.Error("/title with no title was accepted")
	}
	p.turn("and the lexer?")
	if got := listed(); got != "Parser rewrite" {
		t.Errorf("a later turn changed the title: %q", got)
	}
	if n := acptest.CheckSchema(t, p.Sent.String(), p.Received.String()); n == 0 {
		t.Error("no message checked")
	}
	p.Stop()

	q := w.serve(acptest.Options{})
	q.Load(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: w.dir})
	q.WaitUpdates("the title after the replay", titled("Parser rewrite"))
}

// titled reports whether the last session_info_update names title.
func titled(title string) func([]sdk.SessionUpdate) bool {
	return func(us []sdk.SessionUpdate) bool {
		is := infos(us)
		return len(is) > 0 && is[len(is)-1].Title != nil && *is[len(is)-1].Title == title
	}
}
