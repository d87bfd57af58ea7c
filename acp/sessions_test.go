package acp

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/store"
)

// TestListSessionsPages: newest first, 50 a page, the cursor of the
// answer fetches the rest; a bad cursor or relative cwd is refused.
func TestListSessionsPages(t *testing.T) {
	st := store.Open(t.TempDir(), nil)
	ws := "/home/u/proj"
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 60 {
		r := &store.Record{ID: fmt.Sprintf("sess_%02d", i), Title: fmt.Sprintf("t%d", i), Cwd: ws, Turns: 1, Updated: t0.Add(time.Duration(i) * time.Minute)}
		if err := st.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	a := New(Options{Store: st})
	ctx := context.Background()
	p1, err := a.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(ws)})
	if err != nil {
		t.Fatal(err)
	}
	if len(p1.Sessions) != 50 || p1.Sessions[0].SessionId != "sess_59" || p1.NextCursor == nil {
		t.Fatalf("page 1: %d sessions, first %s, cursor %v", len(p1.Sessions), p1.Sessions[0].SessionId, p1.NextCursor)
	}
	p2, err := a.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(ws), Cursor: p1.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Sessions) != 10 || p2.Sessions[9].SessionId != "sess_00" || p2.NextCursor != nil {
		t.Errorf("page 2: %d sessions, cursor %v", len(p2.Sessions), p2.NextCursor)
	}
	if _, err := a.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(ws), Cursor: sdk.Ptr("x")}); err == nil || !strings.Contains(err.Error(), "bad cursor") {
		t.Errorf("bad cursor: %v", err)
	}
	if _, err := a.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr("rel")}); err == nil {
		t.Errorf("relative cwd accepted")
	}
	if l, _ := New(Options{}).ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(ws)}); len(l.Sessions) != 0 || l.Sessions == nil {
		t.Errorf("no store: %+v", l)
	}
}

// TestCommands: built-ins first, extras after, no duplicate names, the
// hint as unstructured input.
func TestCommands(t *testing.T) {
	cs := Commands(Command{Name: "greet", Description: "Say hi", Hint: "name"}, Command{Name: "compact"}, Command{})
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "compact skills title greet" {
		t.Errorf("commands = %v", names)
	}
	if cs[3].Input == nil || cs[3].Input.Unstructured == nil || cs[3].Input.Unstructured.Hint != "name" {
		t.Errorf("greet input = %+v", cs[3].Input)
	}
}
