package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/store"
)

// TestOlderSnapshotNeverReplacesNewer: two saves of one session that
// finish out of order (a mid-turn save of the mode, then the turn's
// final save) leave the newer snapshot on disk.
func TestOlderSnapshotNeverReplacesNewer(t *testing.T) {
	s := store.Open(t.TempDir(), nil)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mid := record("sess_o", "/w", t0)
	mid.Writer, mid.Seq, mid.Turns = "w1", 1, 1
	final := record("sess_o", "/w", t0.Add(time.Minute))
	final.Writer, final.Seq, final.Turns = "w1", 2, 2
	if err := s.Save(final); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(mid); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("sess_o")
	if err != nil {
		t.Fatal(err)
	}
	if got.Seq != 2 || got.Turns != 2 {
		t.Errorf("on disk: seq %d, %d turns — the older snapshot replaced the newer one", got.Seq, got.Turns)
	}
	// A fresh store (another run of mm) is ordered by the file too.
	s2 := store.Open(s.Dir(), nil)
	if err := s2.Save(mid); err != nil {
		t.Fatal(err)
	}
	if got, _ := s2.Load("sess_o"); got.Seq != 2 {
		t.Errorf("a new store replaced seq 2 with seq %d", got.Seq)
	}
}

// TestOneWriterAtATime: while a turn holds a session, another writer's
// turn is refused (ErrInUse); a writer that loaded the session before
// another one saved a turn can neither start a turn nor save over it
// (ErrChanged) — last writer never wins silently.
func TestOneWriterAtATime(t *testing.T) {
	s := store.Open(t.TempDir(), nil)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := record("sess_w", "/w", t0)
	a.Writer, a.Seq = "A", 1
	if err := s.Save(a); err != nil {
		t.Fatal(err)
	}
	loaded, err := s.Load("sess_w")
	if err != nil {
		t.Fatal(err)
	}
	b := store.Stamp{Writer: "B", Base: loaded.Seq, Seq: loaded.Seq}

	release, err := s.Acquire("/w", "sess_w", store.Stamp{Writer: "A", Base: 0, Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire("/w", "sess_w", b); !errors.Is(err, store.ErrInUse) {
		t.Errorf("a second turn during the first: %v, want ErrInUse", err)
	}
	a2 := record("sess_w", "/w", t0.Add(time.Minute))
	a2.Writer, a2.Seq, a2.Turns = "A", 2, 2
	if err := s.Save(a2); err != nil {
		t.Fatalf("the turn's own save: %v", err)
	}
	release()

	if _, err := s.Acquire("/w", "sess_w", b); !errors.Is(err, store.ErrChanged) {
		t.Errorf("a stale writer's turn: %v, want ErrChanged", err)
	}
	stale := record("sess_w", "/w", t0.Add(2*time.Minute))
	stale.Writer, stale.Base, stale.Seq = "B", b.Base, b.Seq+1
	if err := s.Save(stale); !errors.Is(err, store.ErrChanged) {
		t.Errorf("a stale writer's save: %v, want ErrChanged", err)
	}
	if got, _ := s.Load("sess_w"); got.Writer != "A" || got.Turns != 2 {
		t.Errorf("on disk: writer %q, %d turns — A's turn was lost", got.Writer, got.Turns)
	}
	// Loaded again, B continues from A's turn.
	if rel, err := s.Acquire("/w", "sess_w", store.Stamp{Writer: "B", Base: 2, Seq: 2}); err != nil {
		t.Errorf("after loading again: %v", err)
	} else {
		rel()
	}
}

// TestSessionBelongsToItsWorkspace: LoadIn refuses a session of another
// workspace and names it; a save never moves a session.
func TestSessionBelongsToItsWorkspace(t *testing.T) {
	s := store.Open(t.TempDir(), nil)
	r := record("sess_ws", "/home/u/a", time.Now())
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	_, err := s.LoadIn("/home/u/b", "sess_ws")
	var we *store.WorkspaceError
	if !errors.Is(err, store.ErrOtherWorkspace) || !errors.As(err, &we) || we.Cwd != "/home/u/a" {
		t.Errorf("LoadIn from another workspace: %v", err)
	}
	if err == nil || !strings.Contains(err.Error(), "sess_ws belongs to the workspace /home/u/a") {
		t.Errorf("the refusal does not name the session's workspace: %v", err)
	}
	if got, err := s.LoadIn("/home/u/a/", "sess_ws"); err != nil || got.ID != "sess_ws" {
		t.Errorf("LoadIn from its workspace: %v", err)
	}
	if l := s.List("/home/u/a"); len(l) != 1 {
		t.Errorf("list of its workspace: %+v", l)
	}
}

// A session's next turn may start while its previous one is still winding
// down (an editor's stop, then the prompt sent again): the same writer's
// leases overlap instead of the new turn being refused as "in use by
// another mm"; the lock is let go only when the last one ends.
func TestSameWriterTurnsOverlap(t *testing.T) {
	dir := t.TempDir()
	s := store.Open(dir, nil)
	a := store.Stamp{Writer: "A"}
	first, err := s.Acquire("/w", "sess_o", a)
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Acquire("/w", "sess_o", a)
	if err != nil {
		t.Fatalf("the same session's next turn while the last winds down: %v", err)
	}
	other := store.Open(dir, nil) // another mm on the same state directory
	first()
	if _, err := other.Acquire("/w", "sess_o", store.Stamp{Writer: "B"}); !errors.Is(err, store.ErrInUse) {
		t.Fatalf("another mm while a turn still holds the session: %v, want ErrInUse", err)
	}
	second()
	rel, err := other.Acquire("/w", "sess_o", store.Stamp{Writer: "B"})
	if err != nil {
		t.Fatalf("another mm once every turn ended: %v", err)
	}
	rel()
}
