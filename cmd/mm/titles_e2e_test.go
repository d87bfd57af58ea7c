package main

import (
	"slices"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
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
	srv := scenario(t, "titles")
	dir := t.TempDir()
	env := mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir())
	ctx := testenv.Context(t)
	p := startAgent(t, dir, env)
	id := p.session(t, ctx, dir)
	if names := commandsAfterAnswer(t, p, string(id)); !slices.Contains(names, "title") {
		t.Errorf("the / menu lacks title: %v", names)
	}
	before := time.Now().UTC().Add(-time.Second)
	if _, err := p.prompt(ctx, id, "Fix the parser\nIt drops the last token."); err != nil {
		t.Fatal(err)
	}
	us, _ := p.client.snapshot()
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
		l, err := p.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(dir)})
		if err != nil || len(l.Sessions) != 1 || l.Sessions[0].Title == nil {
			t.Fatalf("session/list: %+v, %v", l, err)
		}
		return *l.Sessions[0].Title
	}
	if got := listed(); got != "Fix the parser" {
		t.Errorf("session/list title %q", got)
	}

	resp, err := p.prompt(ctx, id, "/title Parser rewrite")
	if err != nil || resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("/title: %+v, %v", resp, err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("/title asked the model (%d requests)", n)
	}
	p.client.waitUpdates(t, "the new title", func(us []sdk.SessionUpdate) bool {
		is := infos(us)
		return len(is) > 0 && is[len(is)-1].Title != nil && *is[len(is)-1].Title == "Parser rewrite"
	})
	if got := listed(); got != "Parser rewrite" {
		t.Errorf("session/list after /title: %q", got)
	}
	if _, err := p.prompt(ctx, id, "/title"); err == nil {
		t.Error("/title with no title was accepted")
	}
	if _, err := p.prompt(ctx, id, "and the lexer?"); err != nil {
		t.Fatal(err)
	}
	if got := listed(); got != "Parser rewrite" {
		t.Errorf("a later turn changed the title: %q", got)
	}
	if n := checkSchema(t, p.sent.String(), p.stdout.String()); n == 0 {
		t.Error("no message checked")
	}
	p.stdin.Close()
	<-p.done
	p.done <- nil

	q := startAgent(t, dir, env)
	if _, err := q.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: dir, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	q.client.waitUpdates(t, "the title after the replay", func(us []sdk.SessionUpdate) bool {
		is := infos(us)
		return len(is) > 0 && is[len(is)-1].Title != nil && *is[len(is)-1].Title == "Parser rewrite"
	})
	checkSchema(t, q.sent.String(), q.stdout.String())
}

// TestSchemaCatches: the schema check is not a rubber stamp — a notice
// with an empty title and an unknown update kind are invalid.
func TestSchemaCatches(t *testing.T) {
	for _, bad := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"info","title":""}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"compaction_update","status":"completed"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"session_info_update","title":3}}`,
	} {
		var v any
		if err := jsonUnmarshal(bad, &v); err != nil {
			t.Fatal(err)
		}
		if schemaOf(t, "SessionNotification").Validate(v) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}
