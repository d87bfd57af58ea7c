package store_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/tools"
)

// TestBound: one entry keeps at most its bounds, whatever the tool
// produced, and stays valid (JSON input, UTF-8 text); a small call is
// kept as it is.
func TestBound(t *testing.T) {
	huge := strings.Repeat("ligne é\n", 100_000) // 900 KB
	old := "a\nb\nc\n"
	for _, tc := range []struct {
		name string
		tool store.Tool
		max  int
	}{
		{"created file", store.Tool{Diffs: []tools.Diff{{Path: "/w/new", New: huge}}}, store.MaxDiffBytes + 100},
		{"rewritten file", store.Tool{Diffs: []tools.Diff{{Path: "/w/f", Old: &huge, New: strings.ToUpper(huge)}}}, store.MaxDiffBytes + 200},
		{"output", store.Tool{Output: huge}, store.MaxOutputBytes + 100},
		{"input", store.Tool{Input: json.RawMessage(`{"content":` + strings.Repeat(`"x`, 1) + strings.Repeat("x", 1<<20) + `"}`)}, store.MaxInputBytes + 100},
		{"small", store.Tool{Input: json.RawMessage(`{"path":"f"}`), Output: "ok", Diffs: []tools.Diff{{Path: "/w/f", Old: &old, New: "a\nB\nc\n"}}}, 100},
	} {
		b := tc.tool.Bound()
		size := len(b.Output) + len(b.Input)
		for _, d := range b.Diffs {
			size += len(d.New)
			if d.Old != nil {
				size += len(*d.Old)
			}
			if !strings.HasPrefix(tc.name, "small") && !strings.Contains(d.New, "cut") {
				t.Errorf("%s: a cut diff does not say so", tc.name)
			}
		}
		if size > tc.max {
			t.Errorf("%s: kept %d bytes, bound %d", tc.name, size, tc.max)
		}
		if len(b.Input) > 0 && !json.Valid(b.Input) {
			t.Errorf("%s: input is no longer JSON", tc.name)
		}
		if tc.name == "small" {
			if b.Output != "ok" || string(b.Input) != `{"path":"f"}` || *b.Diffs[0].Old != old {
				t.Errorf("small call changed: %+v", b)
			}
		}
	}
}
