package detect

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/notes.golden")

// TestNotesGolden keeps every text mm writes for the model and for the
// user in one file, so a wording change is a reviewed diff. Run with
// -update after an intended change.
func TestNotesGolden(t *testing.T) {
	var b strings.Builder
	section := func(name string) { fmt.Fprintf(&b, "\n== %s\n", name) }
	line := func(s any) { fmt.Fprintf(&b, "%v\n", s) }

	section("runaway")
	r := &Runaway{Reason: RunawayPeriodic, Period: 25, Pattern: "Greet 2023-06-15 11:16:00", Bytes: 356}
	line(r.Note("write_file"))
	line(r.Struggle("write_file"))
	r = &Runaway{Reason: RunawayTooLong, Bytes: 262145}
	line(r.Note("write_file"))
	line(r.Struggle("write_file"))

	section("broken calls")
	tr := BrokenCall{Tool: "write_file", Check: CheckArgs(`{"path": "doc.md", "content": "# Doc`), MaxTokens: 4096}
	line(tr.Note())
	line(tr.Explain())
	line(tr.Struggle(false))
	line(tr.Struggle(true))
	tr.MaxTokens = 0
	line(tr.Note())
	line(tr.Explain())
	mal := BrokenCall{Tool: "bash", Check: CheckArgs(`{"command": ls -la}`)}
	line(mal.Note())
	line(mal.Explain())
	line(mal.Struggle(false))
	line(mal.Struggle(true))

	section("unknown tools")
	ts := testTools()
	line(ts.Resolve("python", nil).Note)
	line(NewToolset().UnknownTool("bash"))
	line(UnknownToolStruggle("python"))

	section("text tool calls")
	_, call := textAll(ts, "I'll check.\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>")
	line(call.Note())
	line(call.Struggle(false))
	_, call = textAll(ts, "<function=python>\n<parameter=code>\nprint(1)\n</parameter>\n</function>")
	line(call.Note())
	_, call = textAll(ts, "{\"name\": \"write_file\", \"arguments\": {\"path\": \"big.txt\", \"content\": \""+strings.Repeat("line of text\\n", 100)+"\"}}")
	line(call.Note())
	line(call.Struggle(true))
	_, call = textAll(ts, "<|tool_use|>{\"name\": \"bash\", \"input\": {\"command\": \"ls\"}}<|/tool_use|>")
	line(call.Note())
	line(call.Struggle(false))
	line(call.ServerFix())
	_, call = textAll(ts, "<bash>\nls\n</bash>")
	line(call.Note())
	_, call = textAll(ts, "<function=bash>\n</function>")
	line(call.Note())
	line(call.Struggle(false))

	section("loops")
	var rec recorder
	d := NewLoopDetector(LoopOptions{Report: rec.report})
	c := ToolCall{Tool: "bash", Input: `{"command":"make"}`, Output: "make: *** No rule to make target", IsError: true}
	for range 6 {
		if v := d.Record(c); v.Note != "" {
			line(v.Note)
		}
	}
	line(d.Record(c).Err())
	d.Reset()
	for i := range 6 {
		if v := d.Record([]ToolCall{{Tool: "read_file", Input: `{"path":"a"}`, Output: "x"}, {Tool: "edit_file", Input: `{"path":"a"}`, Output: "refused", IsError: true}}[i%2]); v.Note != "" {
			line(v.Note)
		}
	}
	d.Reset()
	for i := range 3 {
		d.Record(ToolCall{Tool: "bash", Input: fmt.Sprint(i), Output: "no", IsError: true})
	}
	for _, s := range rec.got {
		line(s)
	}

	section("tool budget")
	bud := ToolBudget{Threshold: DefaultToolBudget}
	for _, n := range []int{24, 36, 48} {
		line(bud.Reminder(n))
	}
	line(bud.Struggle(24))

	section("engine struggles")
	line(Stalled(30*time.Second + 400*time.Millisecond))
	line(MaxTurns(10))
	line(ServerError("llama-server refused the request: the prompt is 70,000 tokens, the window 65,536"))
	line(EmptyAnswer())

	got := b.String()
	const golden = "testdata/notes.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("notes changed; run go test -run NotesGolden -update and review the diff.\ngot:\n%s", got)
	}
}
