package fileedit

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpus replays testdata/corpus: realistic small-model edit mistakes,
// each with the outcome a careful human would want — applied to exactly
// want.content, or refused with a repair text containing every "hint:" of
// the header. Expectations are written by hand, never generated. It prints
// one report line; applied-wrong must stay 0.
//
// Header: "want: applied" or "want: refused", "hint: substring" (any
// number), "loose: N" (optional, for applied cases), "repair: slip" (the
// slip an applied case's first edit was repaired for; none when absent).
// The report also counts the refusals without the first-try repairs, the
// figure docs/file-edits.md gives.
func TestCorpus(t *testing.T) {
	var right, refused, wrong, missed, refusedBefore int
	for _, path := range caseFiles(t, "corpus") {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		c := readCase(t, path)
		file, content, edits := c.input(t)
		if _, err := applyFile(file, content, edits, false); err != nil {
			refusedBefore++ // without the first-try repairs
		}
		before := bytes.Clone(content)
		o, err := ApplyFile(file, content, edits)
		if !bytes.Equal(before, content) {
			t.Errorf("%s: ApplyFile modified its input", name)
		}
		switch c.key("want") {
		case "applied":
			want, ok := c.section("want.content")
			if !ok {
				t.Fatalf("%s: want: applied needs a want.content section", name)
			}
			switch {
			case err != nil:
				missed++
				t.Errorf("%s: refused, want applied:\n%v", name, err)
			case string(o.Content) != want:
				wrong++
				t.Errorf("%s: APPLIED WRONG\n--- want\n%s--- got\n%s", name, visible([]byte(want)), visible(o.Content))
			default:
				right++
				if l := c.key("loose"); l != "" && l != fmt.Sprint(o.Loose) {
					t.Errorf("%s: Loose = %d, want %s", name, o.Loose, l)
				}
				if got := o.Edits[0].Repair; got != c.key("repair") {
					t.Errorf("%s: repaired %q, want %q (%s)", name, got, c.key("repair"), o.Summary)
				}
			}
		case "refused":
			if err == nil {
				wrong++
				t.Errorf("%s: APPLIED, want refused; got\n%s", name, visible(o.Content))
				continue
			}
			refused++
			if o.Content != nil {
				t.Errorf("%s: a refusal returned content", name)
			}
			for _, h := range c.keys["hint"] {
				if h = unescape(h); !strings.Contains(err.Error(), h) {
					t.Errorf("%s: refusal lacks %q:\n%s", name, h, err)
				}
			}
		default:
			t.Fatalf("%s: header needs want: applied | refused", name)
		}
	}
	report := fmt.Sprintf("corpus: %d cases — applied right %d, refused %d, applied wrong %d, refused but should apply %d; without first-try repairs %d refused",
		right+refused+wrong+missed, right, refused, wrong, missed, refusedBefore)
	t.Log(report)
	if testing.Verbose() {
		fmt.Println(report)
	}
}
