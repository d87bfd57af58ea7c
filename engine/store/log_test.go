package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/store"
)

// TestReplayLog: the final entries of a session go to its replay log
// once, so a save writes what the turn added; Load returns the whole
// replay; bytes a failed save left after the committed end of the log
// are ignored, then replaced; a snapshot that does not extend the log
// is stored whole.
func TestReplayLog(t *testing.T) {
	dir := t.TempDir()
	s := store.Open(dir, nil)
	r := record("sess_log", "/w", time.Now())
	r.Writer = "A"
	entry := func(i int) store.Entry { return store.Entry{Kind: store.EntryAgent, Text: fmt.Sprintf("answer %d", i)} }
	r.Replay = nil
	sizes := func() (rec, log int64) {
		for _, f := range []string{"sess_log.json", "sess_log.replay"} {
			m, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", f))
			if len(m) == 1 {
				fi, _ := os.Stat(m[0])
				if f == "sess_log.json" {
					rec = fi.Size()
				} else {
					log = fi.Size()
				}
			}
		}
		return
	}
	var recSizes []int64
	for i := range 50 {
		r.Replay = append(r.Replay, entry(i))
		r.Seq++
		r.Final = len(r.Replay) - 1 // the last one is still being written
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
		rec, _ := sizes()
		recSizes = append(recSizes, rec)
	}
	if recSizes[49] > recSizes[1]+64 {
		t.Errorf("the record grows with the session: %d bytes after 2 saves, %d after 50", recSizes[1], recSizes[49])
	}
	got, err := s.Load("sess_log")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Replay) != 50 || got.Replay[0].Text != "answer 0" || got.Replay[49].Text != "answer 49" {
		t.Fatalf("loaded %d entries", len(got.Replay))
	}

	// A save that died half-way through the log: garbage after the
	// committed end.
	logs, _ := filepath.Glob(filepath.Join(dir, "sessions", "*", "sess_log.replay"))
	f, err := os.OpenFile(logs[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"kind":"agent","text":"half a`)
	f.Close()
	if got, err := s.Load("sess_log"); err != nil || len(got.Replay) != 50 {
		t.Fatalf("after a torn append: %v", err)
	}
	r.Replay[49].Text += " (done)"
	r.Replay = append(r.Replay, entry(50))
	r.Seq++
	r.Final = len(r.Replay)
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(r.ID); err != nil || len(got.Replay) != 51 || got.Replay[49].Text != "answer 49 (done)" || got.Replay[50].Text != "answer 50" {
		t.Fatalf("after the torn append was replaced: %v %+v", err, got)
	}

	// A fresh store (another mm) continues the log of the file.
	s2 := store.Open(dir, nil)
	r.Replay = append(r.Replay, entry(51))
	r.Seq++
	r.Final = len(r.Replay)
	if err := s2.Save(r); err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Load(r.ID); err != nil || len(got.Replay) != 52 || got.Replay[51].Text != "answer 51" {
		t.Fatalf("second store: %v", err)
	}

	// A history rewritten (compacted: a new generation) replaces the
	// logged one; appends continue after it.
	r.History = append(r.History, llm.Message{Role: llm.RoleUser, Content: "more"})
	r.Seq++
	if err := s2.Save(r); err != nil {
		t.Fatal(err)
	}
	r.History, r.HistGen = []llm.Message{{Role: llm.RoleUser, Content: "summary"}}, r.HistGen+1
	r.Seq++
	if err := s2.Save(r); err != nil {
		t.Fatal(err)
	}
	r.History = append(r.History, llm.Message{Role: llm.RoleAssistant, Content: "after"})
	r.Seq++
	if err := s2.Save(r); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Open(dir, nil).Load(r.ID); err != nil || len(got.History) != 2 || got.History[0].Content != "summary" || got.History[1].Content != "after" {
		t.Fatalf("history after a compaction: %v %+v", err, got.History)
	}

	// A shorter replay (not this log's lineage) is stored whole.
	short := record("sess_log", "/w", time.Now())
	short.Replay = []store.Entry{entry(7)}
	short.Final = 1
	if err := s2.Save(short); err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Load(r.ID); err != nil || len(got.Replay) != 1 || got.Replay[0].Text != "answer 7" {
		t.Fatalf("short replay: %v %+v", err, got)
	}
}
