package store_test

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/tools"
)

func record(id, cwd string, updated time.Time) *store.Record {
	old := "a\n"
	return &store.Record{
		ID: id, Title: "t " + id, Cwd: cwd, Provider: "llamacpp", Model: "m", Mode: "ask",
		Created: updated.Add(-time.Minute), Updated: updated, Turns: 1, CallSeq: 2,
		History: []llm.Message{{Role: llm.RoleUser, Content: "hi"}, {Role: llm.RoleAssistant, Content: "hello"}},
		Replay: []store.Entry{{Kind: store.EntryUser, Text: "hi"}, {Kind: store.EntryTool, Tool: &store.Tool{
			ID: "call_1", Title: "Edit a", Kind: tools.KindEdit, Status: "completed",
			Diffs: []tools.Diff{{Path: filepath.Join(cwd, "a"), Old: &old, New: "b\n"}},
		}}},
	}
}

func TestSaveLoadList(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	s := store.Open(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	ws, other := "/home/u/proj", "/home/u/other"
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, r := range []*store.Record{
		record("sess_a", ws, t0),
		record("sess_b", ws, t0.Add(time.Hour)),
		record("sess_c", other, t0.Add(2*time.Hour)),
	} {
		if err := s.Save(r); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	// A session opened and never used is loadable but not listed.
	empty := record("sess_empty", ws, t0.Add(3*time.Hour))
	empty.Turns, empty.Replay, empty.History = 0, nil, nil
	if err := s.Save(empty); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("sess_empty"); err != nil {
		t.Errorf("an unused session is not loadable: %v", err)
	}
	// One unused for two days is removed at the next listing.
	stale := record("sess_stale", ws, t0)
	stale.Turns, stale.Replay, stale.History = 0, nil, nil
	s.Save(stale)
	staleFiles, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "sess_stale*"))
	for _, f := range staleFiles {
		old := time.Now().Add(-48 * time.Hour)
		os.Chtimes(f, old, old)
	}
	s.List(ws)
	if _, err := s.Load("sess_stale"); err == nil || len(staleFiles) != 1 {
		t.Errorf("a session unused for two days is still there (%v)", staleFiles)
	}
	got, err := s.Load("sess_a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "t sess_a" || len(got.History) != 2 || got.Replay[1].Tool.Diffs[0].New != "b\n" || *got.Replay[1].Tool.Diffs[0].Old != "a\n" || got.CallSeq != 2 {
		t.Errorf("loaded %+v", got)
	}

	list := s.List(ws)
	if len(list) != 2 || list[0].ID != "sess_b" || list[1].ID != "sess_a" {
		t.Errorf("list = %+v, want sess_b then sess_a (newest first, this workspace only)", list)
	}
	if all := s.List(""); len(all) != 3 || all[0].ID != "sess_c" {
		t.Errorf("list of every workspace = %+v", all)
	}
	if l, err := s.Latest(ws); err != nil || l.ID != "sess_b" {
		t.Errorf("latest = %v, %v", l, err)
	}

	// Files are private and no temporary file is left behind: each
	// session is its record, its logs (replay, history) and its hidden
	// lock file.
	all, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*"))
	files, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*.json"))
	if len(files) != 4 {
		t.Errorf("files = %v, want the four sessions only", files)
	}
	for _, f := range all {
		if !strings.HasSuffix(f, ".json") && !strings.HasSuffix(f, ".history") && !strings.HasSuffix(f, ".replay") && !strings.HasSuffix(f, ".lock") {
			t.Errorf("left behind: %s", f)
		}
	}
	for _, f := range all {
		fi, _ := os.Stat(f)
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", f, fi.Mode().Perm())
		}
	}

	// A corrupt file and a half-written one are skipped with a log line.
	var sessDir string
	for _, f := range files {
		if strings.Contains(f, "sess_a") {
			sessDir = filepath.Dir(f)
		}
	}
	os.WriteFile(filepath.Join(sessDir, "sess_bad.json"), []byte(`{"id": "sess_bad", "cwd": "/home/u/pr`), 0o600)
	os.WriteFile(filepath.Join(sessDir, "sess_junk.json"), []byte("\x00\x01"), 0o600)
	if list := s.List(ws); len(list) != 2 {
		t.Errorf("list with corrupt files = %+v", list)
	}
	if n := strings.Count(logs.String(), "skipped an unreadable session file"); n != 2 {
		t.Errorf("log lines about skipped files = %d, want 2:\n%s", n, logs.String())
	}
	if _, err := s.Load("sess_bad"); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("load corrupt = %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	s := store.Open(t.TempDir(), nil)
	if _, err := s.Load("sess_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	for _, id := range []string{"../../etc/passwd", "a/b", "", "*"} {
		if _, err := s.Load(id); !errors.Is(err, store.ErrBadID) {
			t.Errorf("Load(%q) = %v, want ErrBadID", id, err)
		}
	}
	if err := s.Save(&store.Record{ID: "../x", Cwd: "/w"}); !errors.Is(err, store.ErrBadID) {
		t.Errorf("save bad id: %v", err)
	}
	if _, err := s.Latest("/w"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("latest of empty: %v", err)
	}
}

func TestUnwritableStore(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o600)
	s := store.Open(blocker, nil) // a file where the directory should be
	if err := s.Save(record("sess_a", "/w", time.Now())); err == nil {
		t.Fatal("save into a file succeeded")
	}
}

func TestTitle(t *testing.T) {
	for in, want := range map[string]string{
		"\n  fix the bug  \nmore": "fix the bug",
		"":                        "(empty prompt)",
		strings.Repeat("é", 100):  strings.Repeat("é", 79) + "…",
	} {
		if got := store.Title(in); got != want {
			t.Errorf("Title(%q) = %q, want %q", in, got, want)
		}
	}
}

// A session id becomes a file name: only 1–128 ASCII letters, digits, '_'
// and '-' are loaded; anything else is refused before the disk is touched.
func TestLoadRefusesBadIDs(t *testing.T) {
	s := store.Open(t.TempDir(), nil)
	for _, id := range []string{"", "../x", "a/b", "a.json", "sess 1", "é", strings.Repeat("a", 129), "a\x00b"} {
		if _, err := s.Load(id); !errors.Is(err, store.ErrBadID) {
			t.Errorf("Load(%q) = %v, want ErrBadID", id, err)
		}
	}
	for _, id := range []string{"a", "sess_01-AB", strings.Repeat("z", 128)} {
		if _, err := s.Load(id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Load(%q) = %v, want ErrNotFound (a valid id)", id, err)
		}
	}
}

// A message the session keeps on disk (a masked tool output, its stub in
// memory) is saved whole: a session loaded later has the output itself.
func TestSaveWritesSpilledContent(t *testing.T) {
	s := store.Open(t.TempDir(), nil)
	r := record("sess_spill", "/w", time.Now())
	r.History = append(r.History, llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: "[output masked]"})
	r.Spilled = func(i int) (string, bool, error) {
		if i == 2 {
			return "the whole 200 KB output", true, nil
		}
		return "", false, nil
	}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("sess_spill")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.History) != 3 || got.History[2].Content != "the whole 200 KB output" || got.History[0].Content != "hi" {
		t.Errorf("loaded history = %+v", got.History)
	}
	// A spilled output that cannot be read back fails the save, naming
	// the session, rather than saving the stub as if it were the output.
	r.History = append(r.History, llm.Message{Role: llm.RoleTool, ToolCallID: "call_2", Content: "[output masked]"})
	r.Spilled = func(i int) (string, bool, error) {
		if i == 3 {
			return "", false, errors.New("spill file gone")
		}
		return "", false, nil
	}
	if err := s.Save(r); err == nil || !strings.Contains(err.Error(), "sess_spill") || !strings.Contains(err.Error(), "spill file gone") {
		t.Errorf("save with an unreadable spilled output: %v", err)
	}
}

// The replay a session hands out is its own: changing a copy's tool call
// leaves the session's entries as they were.
func TestCloneEntriesSharesNothing(t *testing.T) {
	orig := record("sess_x", "/w", time.Now()).Replay
	orig[1].Tool.Input = []byte(`{"path":"a"}`)
	orig[1].Tool.Locations = []tools.Location{{Path: "/w/a"}}
	cp := store.CloneEntries(orig)
	cp[1].Tool.Title = "changed"
	cp[1].Tool.Input[2] = 'X'
	cp[1].Tool.Locations[0].Path = "/elsewhere"
	cp[1].Tool.Diffs[0].New = "changed\n"
	if orig[1].Tool.Title != "Edit a" || string(orig[1].Tool.Input) != `{"path":"a"}` ||
		orig[1].Tool.Locations[0].Path != "/w/a" || orig[1].Tool.Diffs[0].New != "b\n" {
		t.Errorf("the copy shares the original's tool call: %+v", orig[1].Tool)
	}
	if cp[0] != orig[0] {
		t.Errorf("an entry without a tool call changed in the copy: %+v", cp[0])
	}
}

// Session ids are fresh each time and of the one form the store accepts
// (anything else could name a path outside it).
func TestNewIDIsValid(t *testing.T) {
	s := store.Open(t.TempDir(), nil)
	seen := map[string]bool{}
	for range 100 {
		id := store.NewID()
		if seen[id] || !strings.HasPrefix(id, "sess_") || len(id) != len("sess_")+24 {
			t.Fatalf("NewID = %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
	id := store.NewID()
	r := record(id, "/w", time.Now())
	if err := s.Save(r); err != nil {
		t.Fatalf("a NewID is refused by Save: %v", err)
	}
	if _, err := s.Load(id); err != nil {
		t.Fatalf("a NewID is refused by Load: %v", err)
	}
}

// TestDelete: a deleted session leaves no file behind, is neither listed
// nor loadable, a late save of it does not bring it back, and one whose
// turn runs is kept.
func TestDelete(t *testing.T) {
	dir := t.TempDir()
	s := store.Open(dir, nil)
	ws := "/home/u/proj"
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, id := range []string{"sess_a", "sess_b"} {
		if err := s.Save(record(id, ws, t0)); err != nil {
			t.Fatal(err)
		}
	}
	release, err := s.Acquire(ws, "sess_b", store.Stamp{Writer: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete("sess_b"); !errors.Is(err, store.ErrInUse) {
		t.Errorf("deleting a session whose turn runs: %v, want ErrInUse", err)
	}
	release()
	for _, tc := range []struct {
		id   string
		want error
	}{
		{"sess_a", nil},
		{"sess_a", store.ErrNotFound},
		{"../x", store.ErrBadID},
	} {
		if err := s.Delete(tc.id); !errors.Is(err, tc.want) {
			t.Errorf("Delete(%q) = %v, want %v", tc.id, err, tc.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "*sess_a*")); len(left) > 0 {
		t.Errorf("files left behind: %v", left)
	}
	if _, err := s.Load("sess_a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("load after delete: %v", err)
	}
	if err := s.Save(record("sess_a", ws, t0.Add(time.Hour))); err != nil {
		t.Errorf("a late save: %v", err)
	}
	if _, err := s.Load("sess_a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a late save brought the deleted session back: %v", err)
	}
	if got := s.List(ws); len(got) != 1 || got[0].ID != "sess_b" {
		t.Errorf("list after delete = %+v, want sess_b alone", got)
	}
}
