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
	o, err := ApplyFile("", file, []Edit{
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
	o, err = ApplyFile("", []byte("func f() {\n\treturn 1\n}\n"), []Edit{{Old: `    return 1\n}`, New: `    return 2\n}`}})
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
// repairs apply, so the before/after figures of docs/file-edits.md measure them.
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

// TestSlipReadings reads old and new through each slip: whether old shows
// it, the repaired texts, and whether new reads the same way.
func TestSlipReadings(t *testing.T) {
	tests := []struct {
		fix        func(old, new string) (string, string, listing, bool, bool)
		old, new   string
		o, n       string
		seen, fits bool
	}{
		{fixNumbers, "3\tfoo\n4\t\tbar", "3\tfoo\n4\t\tbaz", "foo\n\tbar", "foo\n\tbaz", true, true},
		{fixNumbers, "    12\tfoo\n    13\t\n    14\tbar\n", "foo", "foo\n\nbar\n", "foo", true, true},
		{fixNumbers, "12 | a\n13 | b", "12 | a\nb", "a\nb", "12 | a\nb", true, false},
		{fixNumbers, "12: a\n14: b", "x", "", "", false, false},  // not consecutive
		{fixNumbers, "12: a\n13 | b", "x", "", "", false, false}, // two separators
		{fixNumbers, "8080\n9090", "x", "", "", false, false},    // numbers, no separator
		{fixNewlines, `a()\n\tb()`, `c()`, "a()\n\tb()", "c()", true, true},
		{fixNewlines, `a("\\n")\nb`, `x`, "a(\"\\\\n\")\nb", "x", true, true}, // \\n stays
		{fixNewlines, `a\nb`, "c\nd\\n", "a\nb", "c\nd\\n", true, false},
		{fixNewlines, "a\n\\nb", "x", "", "", false, false}, // real line breaks: not one line
		{fixLeadingTabs, `\t\tgo test`, `\tx`, "\t\tgo test", "\tx", true, true},
		{fixLeadingTabs, `a\tb`, "x", "", "", false, false},
		{fixBackslashes, `r',\\s*'`, `r';\\s*'`, `r',\s*'`, `r';\s*'`, true, true},
		{fixBackslashes, `r',\\s*'`, `r';\s*'`, `r',\s*'`, `r';\s*'`, true, false},
		{fixBackslashes, `a\\\b`, "x", "", "", false, false}, // an odd run
		{fixQuotes, `x = \"a\"`, `x = "b"`, `x = "a"`, `x = "b"`, true, true},
		{fixQuotes, `x = \"a\n\"`, "x", "", "", false, false},
		{fixJSON, `f(\"a\\n\")\n\tg()`, `h()`, "f(\"a\\n\")\n\tg()", "h()", true, true},
		{fixJSON, `\d+`, "x", "", "", false, false},
		{fixJSON, `a"\nb`, "x", "", "", false, false}, // a bare quote: not a JSON body
		{fixJSON, `\ud83d\ude00`, "x", "😀", "x", true, true},
		{fixEntities, "&lt;b&gt; &amp;amp;", "&quot;", "<b> &amp;", `"`, true, true},
		{fixEntities, "&nbsp;", "x", "", "", false, false},
		{fixFence, "```go\nx()\n```\n", "```go\ny()\n```", "x()\n", "y()", true, true},
		{fixFence, "```\nx()\n```", "y()", "x()", "y()", true, true},
		{fixFence, "```\nx()\n```", "```\ny()", "x()", "```\ny()", true, false},
		{fixFence, "```go\nx()\n~~~", "y", "", "", false, false},
	}
	for i, tt := range tests {
		o, n, _, seen, fits := tt.fix(tt.old, tt.new)
		if seen != tt.seen || seen && (o != tt.o || n != tt.n || fits != tt.fits) {
			t.Errorf("%d: fix(%q, %q) = %q, %q, seen %v, fits %v; want %q, %q, %v, %v",
				i, tt.old, tt.new, o, n, seen, fits, tt.o, tt.n, tt.seen, tt.fits)
		}
	}
}

// TestTypographicNew writes new with the file's characters: the parts new
// shares with old as the file has them, and a new quote as an opening or
// closing one.
func TestTypographicNew(t *testing.T) {
	tests := []struct{ file, old, new, want string }{
		{"“a” — b…", `"a" - b...`, `"a" - c...`, "“a” — c…"},
		{"“a” — b…", `"a" - b...`, `"x" and "y"`, "“x” and “y”"},
		{`say "hi"`, "say “hi”", "say “bye”", `say "bye"`},
		{"it’s", "it's", "it's not", "it’s not"},
		{"10\u00a0MB", "10 MB", "20 MB", "20\u00a0MB"},
	}
	for _, tt := range tests {
		o, err := ApplyFile("", []byte(tt.file+"\n"), []Edit{{Old: tt.old, New: tt.new}})
		if err != nil {
			t.Errorf("%q → %q: %v", tt.old, tt.new, err)
			continue
		}
		if got := strings.TrimSuffix(string(o.Content), "\n"); got != tt.want || o.Edits[0].Repair != typographic.name {
			t.Errorf("%q → %q in %q: got %q (%s), want %q", tt.old, tt.new, tt.file, got, o.Edits[0].Repair, tt.want)
		}
	}
}
