package detect

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

type recorder struct{ got []Struggle }

func (r *recorder) report(s Struggle) { r.got = append(r.got, s) }

// A recorded case (18/09/2026, a 12B model): thirty identical
// refused calls. Warned at the third, stopped at the sixth.
func TestLoopThirtyRefusedCallsStoppedAtSix(t *testing.T) {
	var rec recorder
	d := NewLoopDetector(LoopOptions{Report: rec.report})
	call := ToolCall{Tool: "bash", Input: `{"command": "rm -rf /"}`, Output: "[error: refused: catastrophic command]", IsError: true}
	stoppedAt := 0
	for i := 1; i <= 30; i++ {
		v := d.Record(call)
		switch {
		case i < 3 && v.Level != 0:
			t.Fatalf("call %d: %+v", i, v)
		case i >= 3 && i < 6 && (v.Level != Warning || !strings.HasPrefix(v.Note, "[LOOP_DETECTED:") || !strings.Contains(v.Note, "try a different approach")):
			t.Fatalf("call %d: %+v", i, v)
		}
		if v.Stuck() {
			stoppedAt = i
			if !errors.Is(v.Err(), ErrStuck) {
				t.Fatalf("Err() = %v", v.Err())
			}
			break
		}
	}
	if stoppedAt != 6 {
		t.Fatalf("stopped at %d, want 6", stoppedAt)
	}
	var texts []string
	for _, s := range rec.got {
		texts = append(texts, s.String())
	}
	got := strings.Join(texts, "\n")
	wantText := strings.Join([]string{
		"warning: loop: bash ×3 — the model was told to change approach",
		"warning: loop: bash ×4 — the model was told to change approach",
		"warning: loop: bash ×5 — the model was told to change approach",
		"severe: stuck: bash ×6 despite the warning — turn stopped",
	}, "\n")
	if got != wantText {
		t.Fatalf("struggles:\n%s\nwant:\n%s", got, wantText)
	}
}

func TestLoopStaysArmedAfterStuck(t *testing.T) {
	d := NewLoopDetector(LoopOptions{})
	c := ToolCall{Tool: "read_file", Input: `{"path":"a"}`, Output: "same"}
	var levels []string
	for i := 1; i <= 10; i++ {
		levels = append(levels, d.Record(c).Level.String())
	}
	got := strings.Join(levels, " ")
	want := "Level(0) Level(0) warning warning warning severe warning warning severe warning"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	d.Reset()
	if v := d.Record(c); v.Level != 0 {
		t.Fatalf("after Reset: %+v", v)
	}
}

// A different output, a different input, or spacing: not the same call.
func TestLoopKeys(t *testing.T) {
	d := NewLoopDetector(LoopOptions{})
	d.Record(ToolCall{Tool: "bash", Input: `{"command":"go test"}`, Output: "FAIL 1"})
	d.Record(ToolCall{Tool: "bash", Input: `{"command": "go test"}`, Output: "FAIL 1"})
	if v := d.Record(ToolCall{Tool: "bash", Input: "{\n  \"command\": \"go test\"\n}", Output: "FAIL 1"}); v.Level != Warning {
		t.Fatalf("spacing of the input should not matter: %+v", v)
	}
	d.Reset()
	for i := range 5 {
		if v := d.Record(ToolCall{Tool: "bash", Input: `{"command":"go test"}`, Output: fmt.Sprint("progress ", i)}); v.Level != 0 {
			t.Fatalf("a changing output is progress: %+v", v)
		}
	}
}

// Refused edits are keyed by path and kind of error: the model varies its
// old text by a space, the error quotes it and the nearest lines move, but
// it is the same refusal.
func TestLoopRefusedEditsKeyedByPathAndError(t *testing.T) {
	d := NewLoopDetector(LoopOptions{})
	var v LoopVerdict
	for i := range 3 {
		old := "func main() {" + strings.Repeat(" ", i)
		v = d.Record(ToolCall{
			Tool:    "edit_file",
			Input:   fmt.Sprintf(`{"path": "main.go", "edits": [{"old": %q, "new": "x"}]}`, old),
			Output:  fmt.Sprintf("[error: old text %q not found in main.go; nearest lines %d-%d:\n12\tfunc main(){\n]", old, 12+i, 14+i),
			IsError: true,
		})
	}
	if v.Level != Warning || v.Times != 3 || !strings.Contains(v.Note, "your edit_file calls on main.go failed 3 times in a row with the same error") {
		t.Fatalf("%+v", v)
	}
	// Another path is another key.
	if v := d.Record(ToolCall{Tool: "edit_file", Input: `{"path": "util.go", "edits": []}`, Output: "[error: old text \"a\" not found in util.go]", IsError: true}); v.Level != 0 {
		t.Fatalf("%+v", v)
	}
	// A succeeding edit is keyed by its exact input and output.
	d.Reset()
	for i := range 3 {
		if v := d.Record(ToolCall{Tool: "edit_file", Input: fmt.Sprintf(`{"path":"a","edits":[{"old":"%d","new":"x"}]}`, i), Output: "ok"}); v.Level != 0 {
			t.Fatalf("%+v", v)
		}
	}
}

// Cycles of period 2 and 3: read, refused edit, read, refused edit…
func TestLoopCycles(t *testing.T) {
	read := ToolCall{Tool: "read_file", Input: `{"path":"a.go"}`, Output: "package a\n"}
	edit := ToolCall{Tool: "edit_file", Input: `{"path":"a.go","edits":[{"old":"pkg","new":"x"}]}`, Output: "[error: old text not found]", IsError: true}
	test := ToolCall{Tool: "bash", Input: `{"command":"go test"}`, Output: "FAIL"}

	var rec recorder
	d := NewLoopDetector(LoopOptions{Report: rec.report})
	seq := []ToolCall{read, edit, read, edit, read}
	for _, c := range seq {
		if v := d.Record(c); v.Level != 0 {
			t.Fatalf("too early: %+v", v)
		}
	}
	v := d.Record(edit) // the cycle came three times
	if v.Level != Warning || v.Times != 3 || strings.Join(v.Cycle, ",") != "read_file,edit_file" {
		t.Fatalf("%+v", v)
	}
	if !strings.Contains(v.Note, "read_file → edit_file calls 3 times") {
		t.Fatalf("note %q", v.Note)
	}
	d.Record(read)
	d.Record(edit)
	if v := d.Record(read); !v.Stuck() {
		t.Fatalf("three more calls in the cycle should stop the turn: %+v", v)
	}
	if last := rec.got[len(rec.got)-1]; last.Kind != KindStuck || last.Text != "stuck: edit_file → read_file ×4 despite the warning — turn stopped" {
		t.Fatalf("%+v", last)
	}

	d.Reset()
	for i := 0; i < 8; i++ {
		if v := d.Record([]ToolCall{read, edit, test}[i%3]); v.Level != 0 {
			t.Fatalf("call %d: %+v", i, v)
		}
	}
	if v := d.Record(test); v.Level != Warning || len(v.Cycle) != 3 {
		t.Fatalf("period 3: %+v", v)
	}
}

// Failing calls in a row: a warning from the third, for the user only.
func TestLoopFailingInARow(t *testing.T) {
	var rec recorder
	d := NewLoopDetector(LoopOptions{Report: rec.report})
	for _, name := range []string{"config.yml", "conf/config.yml", "config.yaml", "cfg.yml"} {
		v := d.Record(ToolCall{Tool: "bash", Input: `{"command":"cat ` + name + `"}`, Output: "cat: " + name + ": No such file", IsError: true})
		if v.Level != 0 || v.Note != "" {
			t.Fatalf("failing is not a loop: %+v", v)
		}
	}
	if len(rec.got) != 2 || rec.got[0].Text != "failing: 3 tool calls in a row" || rec.got[1].Text != "failing: 4 tool calls in a row" || rec.got[1].Level != Warning || rec.got[1].Kind != KindFailing {
		t.Fatalf("%+v", rec.got)
	}
	d.Record(ToolCall{Tool: "bash", Input: `{"command":"ls"}`, Output: "config.toml"})
	d.Record(ToolCall{Tool: "bash", Input: `{"command":"cat x"}`, Output: "no", IsError: true})
	if len(rec.got) != 2 {
		t.Fatalf("a success resets the count: %+v", rec.got)
	}
}

// TestLoopIgnoresDurations: a command repeated with the same result is a
// loop even when its reported run time differs (bash's status line; it
// made the e2e loop test flaky on a loaded machine).
func TestLoopIgnoresDurations(t *testing.T) {
	d := NewLoopDetector(LoopOptions{})
	var v LoopVerdict
	for i, took := range []string{"0.0s", "0.1s", "1.3s"} {
		v = d.Record(ToolCall{Tool: "bash", Input: `{"command":"cat missing.txt"}`, Output: "cat: missing.txt: No such file\n[exit code: 1 · " + took + "]", IsError: true})
		if i < 2 && v.Level != 0 {
			t.Fatalf("call %d: %+v", i+1, v)
		}
	}
	if v.Level != Warning {
		t.Errorf("third identical call (times differ) = %+v, want a loop warning", v)
	}
	if d.Record(ToolCall{Tool: "bash", Input: `{"command":"cat missing.txt"}`, Output: "12 files\n[exit code: 0 · 0.2s]"}).Level != 0 {
		t.Error("a different result is still a loop")
	}
}
