package compact_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mm-agent/mm/engine/compact"
	"github.com/mm-agent/mm/engine/llm"
)

func TestStub(t *testing.T) {
	lines := strings.Repeat("x\n", 212)
	for _, c := range []struct {
		name, args, out, want string
	}{
		{"read_file", `{"path":"f01.txt"}`, lines, "[output of read_file f01.txt elided — 212 lines; read it again if needed]"},
		{"bash", `{"command":"go test ./..."}`, lines + "[exit code: 1 · 1.2s]", `[output of "go test ./..." elided — 213 lines, exit 1; rerun it if needed]`},
		{"lsp", `{"op":"references","symbol":"Greet"}`, "a", `[output of lsp "references" elided — 1 line; call it again if needed]`},
		{"mystery", `not json`, lines, "[output of mystery elided — 212 lines; call it again if needed]"},
	} {
		if got := compact.Stub(llm.ToolCall{Name: c.name, Arguments: c.args}, c.out); got != c.want {
			t.Errorf("%s: %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestCap(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(strings.Repeat("é", i%7) + " line\n")
	}
	text := b.String()
	got := compact.Cap(text, 4000)
	if len(got) > 4000 || !utf8.ValidString(got) {
		t.Fatalf("capped to %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	if !strings.HasPrefix(got, text[:1000]) || !strings.HasSuffix(got, text[len(text)-600:]) {
		t.Fatal("head and tail not both kept")
	}
	if !strings.Contains(got, "characters cut from the middle") || !strings.Contains(got, "read_file with start/end") {
		t.Fatalf("no marker saying what was cut and how to read it:\n%s", got)
	}
	if compact.Cap("short", 4000) != "short" {
		t.Fatal("a short text was changed")
	}
}

func TestMaxOutput(t *testing.T) {
	for w, want := range map[int]int{0: 16000, 2048: 2000, 8192: 4300, 32768: 16000} {
		if got := compact.MaxOutput(w); got != want {
			t.Errorf("MaxOutput(%d) = %d, want %d", w, got, want)
		}
	}
}

func TestSummaryBlockRoundTrip(t *testing.T) {
	text := "Workspace: /w\n\n" + compact.Block("- did things") + "next prompt"
	sum, rest, ok := compact.SplitBlock(text)
	if !ok || sum != "- did things" || rest != "Workspace: /w\n\nnext prompt" {
		t.Fatalf("SplitBlock = %q, %q, %v", sum, rest, ok)
	}
	if _, _, ok := compact.SplitBlock("plain prompt"); ok {
		t.Fatal("found a block in a plain prompt")
	}
}

// The transcript keeps the newest messages when it must drop some, and
// says how many it left out.
func TestTranscriptDropsOldest(t *testing.T) {
	var msgs []llm.Message
	for i := range 50 {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: strings.Repeat("q", 100) + string(rune('A'+i%26))})
	}
	tr := compact.Transcript(msgs, 1000, 1200)
	if len(tr) > 1300 || !strings.HasPrefix(tr, "[") || !strings.Contains(tr, "earlier messages left out") {
		t.Fatalf("transcript of %d bytes:\n%s", len(tr), tr)
	}
	if !strings.HasSuffix(tr, msgs[49].Content) {
		t.Fatal("the newest message was dropped")
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 14210: "14,210", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := compact.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q", n, got)
		}
	}
}
