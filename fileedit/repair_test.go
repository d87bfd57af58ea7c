package fileedit

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepairKeepsTheRestOfTheFile replays every repaired case of the
// corpus inside a larger file — other lines after it, before it, CRLF line
// endings, a BOM — and checks that a repair changes only the region its
// repaired old matched: the result is the case's expected content with the
// surroundings byte for byte, and every byte outside the replaced region
// is the original's.
func TestRepairKeepsTheRestOfTheFile(t *testing.T) {
	n := 0
	for _, path := range caseFiles(t, "corpus") {
		c := readCase(t, path)
		if c.key("repair") == "" {
			continue
		}
		n++
		name, content, edits := c.input(t)
		want, _ := c.section("want.content")
		head := "zz unrelated first line\n\n"
		tail := "\nzz unrelated last line with “quotes” — and … \\n\n"
		variants := []struct {
			name       string
			file, want string
			mustApply  bool
		}{
			{"tail", string(content) + tail, want + tail, true},
			{"crlf", crlf(string(content) + tail), crlf(want + tail), true},
			{"bom", bom + string(content), bom + want, true},
			// the lines move: line numbers may no longer be trusted
			{"head", head + string(content) + tail, head + want + tail, false},
		}
		for _, v := range variants {
			label := filepath.Base(path) + "/" + v.name
			o, err := ApplyFile(name, []byte(v.file), edits)
			if err != nil {
				if v.mustApply {
					t.Errorf("%s: refused: %v", label, err)
				}
				t.Logf("%s: refused: %v", label, err)
				continue
			}
			if string(o.Content) != v.want {
				t.Errorf("%s: got\n%q\nwant\n%q", label, o.Content, v.want)
				continue
			}
			if o.Edits[0].Repair != c.key("repair") {
				t.Errorf("%s: repaired %q, want %q", label, o.Edits[0].Repair, c.key("repair"))
			}
			checkRegions(t, []byte(v.file), o)
			checkRepaired(t, []byte(v.file), edits[0], o.regions[0])
		}
	}
	if n < 15 {
		t.Fatalf("only %d repaired cases in the corpus", n)
	}
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

// TestRepairSummary checks the result line of repaired edits: one line,
// naming what was repaired and what to send next time, per edit when a
// call has several.
func TestRepairSummary(t *testing.T) {
	file := []byte("a = 1\nb = \"x\"\nc = 3\n")
	o, err := Apply(file, []Edit{
		{Old: "a = 1", New: "a = 2"},
		{Old: `b = \"x\"`, New: `b = \"y\"`},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `2 edits applied; edit 2 after turning \" into " in old and new — write quotes without a backslash`
	if o.Summary != want {
		t.Errorf("summary = %q, want %q", o.Summary, want)
	}
	if got := string(o.Content); got != "a = 2\nb = \"y\"\nc = 3\n" {
		t.Errorf("content = %q", got)
	}
	if o.Edits[0].Repair != "" || o.Edits[1].Repair != `\"` {
		t.Errorf("repairs = %+v", o.Edits)
	}
	// a loose and repaired edit says both
	o, err = Apply([]byte("func f() {\n\treturn 1\n}\n"), []Edit{{Old: `    return 1\n}`, New: `    return 2\n}`}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o.Summary, `after turning the two characters \n`) || !strings.Contains(o.Summary, "1 matched ignoring whitespace") || strings.Contains(o.Summary, "\n") {
		t.Errorf("summary = %q", o.Summary)
	}
	if got := string(o.Content); got != "func f() {\n\treturn 2\n}\n" {
		t.Errorf("content = %q", got)
	}
}

// TestRepairOff checks that applyFile without repairs refuses what the
// repairs apply, so the README's before/after figures measure them.
func TestRepairOff(t *testing.T) {
	file := []byte("x := 1\ny := 2\n")
	edits := []Edit{{Old: "1\tx := 1\n2\ty := 2", New: "1\tx := 10\n2\ty := 2"}}
	if _, err := applyFile("a.go", file, edits, false); err == nil {
		t.Fatal("applied without repairs")
	}
	o, err := applyFile("a.go", file, edits, true)
	if err != nil || !bytes.Equal(o.Content, []byte("x := 10\ny := 2\n")) {
		t.Fatalf("with repairs: %q, %v", o.Content, err)
	}
}
