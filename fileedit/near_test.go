package fileedit

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestNearReadings: for every slip a repair reads, a file that also holds
// old one other transform away — the slip undone the other way or another
// slip — somewhere else. The edit is refused, naming both places with
// their line numbers and what each reading did; the file is untouched.
// Without the twin (the last line of file removed) the same edit applies.
func TestNearReadings(t *testing.T) {
	tests := []struct {
		name     string
		file     string // its last line is the twin
		old, new string
		repair   string // what applies without the twin
		want     []string
	}{
		{
			name: `literal \n, twin with \"`,
			file: "x := `f() {\n\tg(\"a\")\n}`\ny := \"f() {\\n\\tg(\\\"a\\\")\\n}\"\n",
			old:  `f() {\n\tg("a")\n}`, new: `f() {\n\tg("b")\n}`,
			repair: `literal \n`,
			want:   []string{"lines 1–3", "line 4", `writing each " of old as \"`},
		},
		{
			name: `typographic, twin with \n and \t`,
			file: "x = \"a\"\ny = 1\nz = \"x = “a”\\ny = 1\"\n",
			old:  "x = “a”\ny = 1", new: "x = “b”\ny = 1",
			repair: typographic.name,
			want:   []string{"lines 1–2", "line 3", `line breaks and tabs of old into the two characters \n and \t`},
		},
		{
			name: `typographic, twin with a leading \t`,
			file: "a:\n\tsay \"a\"\n\tdo\nhelp:\n\\tsay “a”\n\\tdo\n",
			old:  "\tsay “a”\n\tdo", new: "\tsay “b”\n\tdo",
			repair: typographic.name,
			want:   []string{"lines 2–3", "lines 5–6", `tabs that start old's lines into the two characters \t`},
		},
		{
			name: "typographic, twin with doubled backslashes",
			file: "m := re(\"\\d\")\ndoc := `re(“\\\\d”)`\n",
			old:  `re(“\d”)`, new: `re(“\d+”)`,
			repair: typographic.name,
			want:   []string{"line 1", "line 2", "doubling the backslashes of old"},
		},
		{
			name: "line numbers, twin with \\\"",
			file: "a = 1\nb = 2\nx = \"a\"\nlisting = \"3: x = \\\"a\\\"\"\n",
			old:  "3: x = \"a\"", new: "3: x = \"b\"",
			repair: "line-number prefixes",
			want:   []string{"line 3", "line 4", `writing each " of old as \"`},
		},
		{
			name: `leading \t, twin with \"`,
			file: "test:\n\tgo test \"./...\"\nhelp := \"\\tgo test \\\"./...\\\"\"\n",
			old:  `\tgo test "./..."`, new: `\tgo test -race "./..."`,
			repair: `literal \t`,
			want:   []string{"line 2", "line 3", `writing each " of old as \"`},
		},
		{
			name: `doubled backslashes, twin with \"`,
			file: "m = re(\"\\d\")\ns = \"m = re(\\\"\\\\d\\\")\"\n",
			old:  `m = re("\\d")`, new: `m = re("\\d+")`,
			repair: "doubled backslashes",
			want:   []string{"line 1", "line 2", `writing each " of old as \"`},
		},
		{
			name: `\", twin with entities`,
			file: "if x == \"a\" && ok {\n<code>if x == \\\"a\\\" &amp;&amp; ok {</code>\n",
			old:  `if x == \"a\" && ok {`, new: `if x == \"b\" && ok {`,
			repair: `\"`,
			want:   []string{"line 1", "line 2", "writing the <, > and & of old as HTML entities"},
		},
		{
			name: "JSON escapes, twin with doubled backslashes",
			file: "f(\"a\\n\")\ns := `f(\\\\\"a\\\\\\\\n\\\\\")`\n",
			old:  `f(\"a\\n\")`, new: `f(\"b\\n\")`,
			repair: "JSON escapes",
			want:   []string{"line 1", "line 2", "doubling the backslashes of old"},
		},
		{
			name: "typographic, twin as JSON",
			file: "x(\"a\", \"b\")\ny\n{\"src\": \"x(“a”, \\\"b\\\")\\ny\"}\n",
			old:  "x(“a”, \"b\")\ny", new: "x(“a”, \"c\")\ny",
			repair: typographic.name,
			want:   []string{"lines 1–2", "line 3", "escaping old as the body of a JSON string"},
		},
		{
			name: "typographic, twin with entities and quotes",
			file: "<a href=\"x\">\"t\"</a>\n<pre>&lt;a href=&quot;x&quot;&gt;“t”&lt;/a&gt;</pre>\n",
			old:  "<a href=\"x\">“t”</a>", new: "<a href=\"y\">“t”</a>",
			repair: typographic.name,
			want:   []string{"line 1", "line 2", `writing the <, >, & and " of old as HTML entities`},
		},
		{
			name: "typographic, twin in a numbered listing",
			file: "say \"a\"\nnext()\n\nListing:\n10\tsay “a”\n11\tnext()\n",
			old:  "say “a”\nnext()", new: "say “b”\nnext()",
			repair: typographic.name,
			want:   []string{"lines 1–2", "lines 5–6", "lines of a numbered listing in the file"},
		},
		{
			name: "a code fence, twin in a numbered listing",
			file: "run()\nstop()\nListing:\n1\t```\n2\trun()\n3\tstop()\n4\t```\n",
			old:  "```\nrun()\nstop()\n```", new: "```\nrun(fast)\nstop()\n```",
			repair: "a Markdown code fence",
			want:   []string{"lines 1–2", "lines 4–7", "lines of a numbered listing in the file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := []byte(tt.file)
			before := bytes.Clone(content)
			_, err := ApplyFile("f", content, []Edit{{Old: tt.old, New: tt.new}})
			if !bytes.Equal(content, before) {
				t.Fatal("ApplyFile modified its input")
			}
			if err == nil {
				t.Fatal("applied an old that reads two ways")
			}
			msg := err.Error()
			if !errors.Is(err, ErrAmbiguous) || !strings.Contains(msg, "reads two ways") {
				t.Fatalf("not refused as two readings: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("refusal lacks %q:\n%s", w, msg)
				}
			}
			// without the twin, the repair applies
			lines := strings.SplitAfter(strings.TrimSuffix(tt.file, "\n"), "\n")
			alone := strings.Join(lines[:len(lines)-1], "")
			o, err := ApplyFile("f", []byte(alone), []Edit{{Old: tt.old, New: tt.new}})
			if err != nil {
				t.Fatalf("without the twin: %v", err)
			}
			if o.Edits[0].Repair != tt.repair {
				t.Errorf("without the twin: repaired %q, want %q", o.Edits[0].Repair, tt.repair)
			}
		})
	}
}

// TestInverseReadings reads old through each inverse: the text looked for,
// and no reading when old has nothing to read that way.
func TestInverseReadings(t *testing.T) {
	tests := []struct {
		read func(string) (string, bool)
		old  string
		want string
		ok   bool
	}{
		{escapeNT, "f() {\n\tg()\n}\n", `f() {\n\tg()\n}`, true},
		{escapeNT, "f()", "", false},
		{escapeLeadingTabs, "\t\tx\n\ty\tz", "\\t\\tx\n\\ty\tz", true},
		{escapeLeadingTabs, "x\ty", "x\ty", false},
		{escapeQuotes, `say("hi", \"x\")`, `say(\"hi\", \"x\")`, true},
		{escapeQuotes, `x \\"`, `x \\\"`, true},
		{escapeQuotes, `\"x\"`, `\"x\"`, false},
		{jsonEscape, "f(\"a\\n\")\n\tg()", `f(\"a\\n\")\n\tg()`, true},
		{jsonEscape, "a < b", "a < b", false},
		{encodeEntities(false), `a < b && "c"`, `a &lt; b &amp;&amp; "c"`, true},
		{encodeEntities(true), `<a href="x">`, `&lt;a href=&quot;x&quot;&gt;`, true},
		{encodeEntities(true), "abc", "abc", false},
	}
	for i, tt := range tests {
		got, ok := tt.read(tt.old)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("%d: read(%q) = %q, %v; want %q, %v", i, tt.old, got, ok, tt.want, tt.ok)
		}
	}
}

// TestFindListed finds old as the text of numbered lines the file holds,
// numbered consecutively with one separator, and nowhere else.
func TestFindListed(t *testing.T) {
	file := "foo()\nbar()\n  7: foo()\n  8: bar()\n9\tfoo()\n11\tbar()\nx 1: foo()\n"
	d := doc{text: file}
	s := d.findListed("foo()\nbar()")
	if s.count != 1 || d.lineNo(s.matches[0].start) != 3 || d.lineNo(s.matches[0].end-1) != 4 {
		t.Fatalf("found %d, at %+v", s.count, s.matches)
	}
	if s := d.findListed("foo()"); s.count != 2 { // lines 3 and 5; line 7 is not a listing's
		t.Errorf("one line found %d times, want 2", s.count)
	}
	if s := d.findListed("\n\n"); s.count != 0 {
		t.Errorf("blank old found %d times", s.count)
	}
}
