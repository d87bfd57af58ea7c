package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/files"
	"github.com/mm-agent/mm/tools/workspace"
)

// TestSessionSizeBounded: a 200-turn session with 100 edits (the real
// edit_file tool) of a 2,000-line file (107 KiB). What the session keeps
// of an edit is its diff, not the file twice, and a save writes the
// turn, not the session: the last save writes a few KiB.
//
// Figures (200 turns; 60 under -race): go test -run TestSessionSizeBounded -v ./engine
func TestSessionSizeBounded(t *testing.T) {
	t.Parallel()
	turns, lines := 200, 2000
	if raceEnabled {
		// The bounds below hold turn by turn; 60 turns show them at a
		// tenth of the CPU the detector would spend on 200.
		turns = 60
	}
	dir, stateDir := t.TempDir(), t.TempDir()
	var src strings.Builder
	for i := range lines {
		fmt.Fprintf(&src, "line %04d: some code that the model edits now and then\n", i)
	}
	big := filepath.Join(dir, "big.go")
	if err := os.WriteFile(big, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The model reads the file first (edit_file asks for that).
	steps := []llmtest.Step{{ToolCalls: []llmtest.ToolCall{{Name: "read_file", ArgsRaw: `{"path":"big.go"}`}}}}
	for i := 1; i <= turns; i++ {
		if i%2 == 1 {
			k := (i / 2 * 19) % lines
			args, _ := json.Marshal(map[string]any{"path": "big.go", "edits": []map[string]string{{
				"old": fmt.Sprintf("line %04d: some code that the model edits now and then", k),
				"new": fmt.Sprintf("line %04d: edited in turn %d", k, i),
			}}})
			steps = append(steps, llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "edit_file", ArgsRaw: string(args)}}},
				llmtest.Step{Content: fmt.Sprintf("Edited line %d.", k)})
		} else {
			steps = append(steps, llmtest.Step{Content: "Noted, nothing to change this time."})
		}
	}
	srv := llmtest.NewServer(llmtest.Scenario{Steps: steps, NCtx: 1 << 20})
	t.Cleanup(srv.Close)
	env, err := workspace.New(workspace.Options{Cwd: dir, Policy: permit.NewPolicy(true, nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(stateDir, nil)
	s := engine.NewSession(engine.Options{
		Model:     llm.New(llm.Options{Provider: "llamacpp", BaseURL: srv.URL(), RetryDelays: []time.Duration{}}),
		ModelName: "fake-model",
		Tools:     tools.NewRegistry(files.New(files.Options{MaxTokens: 4096})...),
		Env:       env,
		Sampling:  llm.Sampling{MaxTokens: 4096},
		Store:     st,
		ID:        "sess_size",
		// A window the session never fills: no compaction, so the
		// history grows with the session, as a worst case.
		ContextWindow: func(context.Context) int { return 1 << 20 },
	})
	// sizes are the session's files now: the record, and the rest (the
	// replay log, when there is one).
	sizes := func() (record, rest int64) {
		fs, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*", "sess_size*"))
		for _, f := range fs {
			if fi, err := os.Stat(f); err == nil {
				if strings.HasSuffix(f, ".json") {
					record += fi.Size()
				} else {
					rest += fi.Size()
				}
			}
		}
		return record, rest
	}
	var total, last, maxWrite, prevRest int64
	for i := 1; i <= turns; i++ {
		var failed string
		var toolErr []string
		end := s.Run(context.Background(), fmt.Sprintf("Turn %d: look at big.go.", i), func(e engine.Event) {
			if st, ok := e.(engine.Struggle); ok && st.Kind == "store" {
				failed = st.Text
			}
			if f, ok := e.(engine.ToolFinished); ok && f.Result.IsError {
				toolErr = append(toolErr, f.Result.Text)
			}
		})
		if end.Reason != engine.EndTurn || failed != "" || len(toolErr) > 0 {
			t.Fatalf("turn %d: %+v %s %v", i, end, failed, toolErr)
		}
		rec, rest := sizes()
		last = rec + max(0, rest-prevRest) // what this save wrote
		total += last
		maxWrite = max(maxWrite, last)
		prevRest = rest
	}
	rec, rest := sizes()
	loaded, err := st.Load("sess_size")
	if err != nil {
		t.Fatal(err)
	}
	hist, _ := json.Marshal(loaded.History)
	t.Logf("%d turns, %d edits of a %d-line file (%d KiB): session on disk %d KiB (record %d B, logs %d KiB; the history is %d KiB of it); last save wrote %d B, largest %d KiB, all saves %d KiB",
		turns, turns/2, lines, len(src.String())>>10, (rec+rest)>>10, rec, rest>>10, int64(len(hist))>>10, last, maxWrite>>10, total>>10)

	if got := loaded.Turns; got != turns {
		t.Fatalf("turns on disk = %d", got)
	}
	edits := 0
	for _, e := range loaded.Replay {
		if e.Tool != nil && len(e.Tool.Diffs) == 1 {
			edits++
			d := e.Tool.Diffs[0]
			if d.Old == nil || !strings.Contains(d.New, "edited in turn") || strings.Count(d.New, "\n") > 2*store.DiffContext+1 {
				t.Fatalf("a kept diff is not the change with its context:\n%s", d.New)
			}
		}
	}
	if edits != turns/2 {
		t.Errorf("%d edits kept for replay, want %d", edits, turns/2)
	}
	// The bounds: 1 KiB of replay per turn at most (an edit's diff, 7
	// lines each side) beside the history; a save writes the turn.
	if size := rec + rest; size > int64(len(hist))+int64(turns)*1024 {
		t.Errorf("session is %d KiB, history %d KiB: more than 1 KiB per turn beside the history", size>>10, len(hist)>>10)
	}
	if last > 16<<10 {
		t.Errorf("the last save wrote %d KiB of a %d KiB session: a save is O(session)", last>>10, (rec+rest)>>10)
	}
}
