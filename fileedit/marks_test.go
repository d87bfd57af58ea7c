package fileedit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRepairKeepsSlipOutOfFile: old reads through a slip, but new still
// holds a mark of it once read the same way (new read only in part, or
// encoded twice). Applied, the repair would write the slip into the file;
// it is refused, saying so, and the file is untouched.
func TestRepairKeepsSlipOutOfFile(t *testing.T) {
	tests := []struct {
		name, file, old, new string
		want                 string // in the refusal
	}{
		{"line numbers", "a()\nb()\n", "1\ta()\n2\tb()", "1\ta()\n2\t2\tb(1)", "new would still write line numbers"},
		{`literal \n`, "a()\nb()\n", `a()\nb()`, `a()\nb("\\n")`, `new would still write \n`},
		{"doubled backslashes", "m = re(\"\\d\")\n", `m = re("\\d")`, `m = re("\\\\d")`, `new would still write \\`},
		{"JSON escapes", "f(\"a\")\n", `f(\"a\")`, `f(\"a\\\"b\")`, `new would still write \"`},
		{"HTML entities", "a < b\n", "a &lt; b", "a &amp;lt; b", "new would still write HTML entities"},
		{"other HTML entities", "a < b\n", "a &lt; b", "a &amp;quot; b", "new would still write HTML entities"},
		{"a Markdown code fence", "x()\n", "```\nx()\n```", "```\n```go\ny()\n```\n```", "new would still write ```"},
		{"typographic dashes", "a — b – c\n", "a - b - c", "a - b - c - d", "new would still write hyphens"},
		{"typographic quotes", "say \"a\"\n", "say “a”", "say “a” „b“", "new would still write curly quotes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := []byte(tt.file)
			o, err := ApplyFile("f", content, []Edit{{Old: tt.old, New: tt.new}})
			if err == nil {
				t.Fatalf("applied, writing %q", o.Content)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("refusal lacks %q:\n%v", tt.want, err)
			}
			if string(content) != tt.file {
				t.Error("the file changed")
			}
		})
	}
}

// TestForeignIndent: the indentation written is made of the file's
// characters at that place.
func TestForeignIndent(t *testing.T) {
	tests := []struct {
		repl, place string
		bad         rune
	}{
		{"  a\n\tb", "    x", 0},
		{"  a\n\u00a0\u00a0b", "    x", '\u00a0'},
		{"\u00a0b", "\u00a0x", 0}, // the file indents with it there
		{"a\u00a0b", "x", 0},      // not indentation
		{"\u2003a", "x", '\u2003'},
	}
	for _, tt := range tests {
		c, ok := foreignIndent(tt.repl, tt.place)
		if ok != (tt.bad != 0) || ok && c != tt.bad {
			t.Errorf("foreignIndent(%q, %q) = %q, %v; want %q", tt.repl, tt.place, c, ok, tt.bad)
		}
	}
}

// TestForeignMarks: only the kinds the repair took out of old count, and
// only where the file lacks them.
func TestForeignMarks(t *testing.T) {
	m := substrings(`\"`, `\n`)
	tests := []struct {
		old, fixed, repl, place string
		want                    string
	}{
		{`x = \"a\"`, `x = "a"`, `x = \"b\"`, `x = "a"`, `\"`},
		{`x = \"a\"`, `x = "a"`, `x = \"b\"`, `x = \"a\" + "a"`, ""}, // the file has \" there
		{`x = \"a\"`, `x = "a"`, `x = "b\n"`, `x = "a"`, ""},         // \n was not taken out of old
		{`x = \"a\"`, `x = "a"`, `x = "b"`, `x = "a"`, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(foreignMarks(m, tt.old, tt.fixed, tt.repl, tt.place), " "); got != tt.want {
			t.Errorf("foreignMarks(%q → %q, %q in %q) = %q, want %q", tt.old, tt.fixed, tt.repl, tt.place, got, tt.want)
		}
	}
}

// TestNBSPIndentation: old
// and new indented with NO-BREAK SPACEs, the file with spaces or tabs.
// Every written line is indented with the file's characters, including the
// lines new adds, and no NBSP is left anywhere.
func TestNBSPIndentation(t *testing.T) {
	nb := func(n int) string { return strings.Repeat("\u00a0", n) }
	tests := []struct{ file, old, new, want string }{
		{
			"def f(x):\n    if x:\n        return 1\n    return 0\n",
			nb(4) + "if x:\n" + nb(8) + "return 1", nb(4) + "if x:\n" + nb(8) + "log(x)\n" + nb(8) + "return 2",
			"def f(x):\n    if x:\n        log(x)\n        return 2\n    return 0\n",
		},
		{ // one line, found by the single-line pass
			"def f(x):\n    return 1\n",
			nb(4) + "return 1", nb(4) + "return 2",
			"def f(x):\n    return 2\n",
		},
		{ // two NBSPs a level for a four-space file
			"class A:\n    def f(self):\n        pass\n",
			nb(2) + "def f(self):\n" + nb(4) + "pass", nb(2) + "def f(self):\n" + nb(4) + "if self:\n" + nb(6) + "pass",
			"class A:\n    def f(self):\n        if self:\n            pass\n",
		},
		{ // tabs in the file
			"func f() {\n\tif x {\n\t\ty()\n\t}\n}\n",
			nb(4) + "if x {\n" + nb(8) + "y()", nb(4) + "if x {\n" + nb(8) + "y()\n" + nb(8) + "z()",
			"func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n",
		},
		{ // an NBSP the file has inside a line stays; the indentation is the file's
			"units:\n  size: 10\u00a0MB\n",
			nb(2) + "size: 10\u00a0MB", nb(2) + "size: 20\u00a0MB\n" + nb(2) + "max: 30\u00a0MB",
			"units:\n  size: 20\u00a0MB\n  max: 30\u00a0MB\n",
		},
	}
	for _, tt := range tests {
		o, err := ApplyFile("f", []byte(tt.file), []Edit{{Old: tt.old, New: tt.new}})
		if err != nil {
			t.Errorf("%q: %v", tt.file, err)
			continue
		}
		if got := string(o.Content); got != tt.want {
			t.Errorf("%q:\ngot  %q\nwant %q", tt.file, got, tt.want)
		}
		if o.Edits[0].Repair != typographic.name {
			t.Errorf("%q: repaired %q", tt.file, o.Edits[0].Repair)
		}
		if bytes.Contains(o.Content, []byte("\u00a0")) && !strings.Contains(tt.file, "\u00a0") {
			t.Errorf("%q: an NBSP was written", tt.file)
		}
	}
}

// slipEncoder writes a text as a model that slipped: old and new alike.
type slipEncoder struct {
	repair string // the repair that reads it back (Applied.Repair)
	// token is the content of a generated line: text the slip encodes
	token func(id int) string
	// encode writes old or new with the slip; first is the file's line
	// number of its first line.
	encode func(s string, first int) string
	// indent reports whether the slip applies to the model's indentation
	// (the leading \t slip needs tabs, NBSPs replace spaces); nil for any.
	indent func(tabs bool) bool
}

var slipEncoders = []slipEncoder{
	{repair: "line-number prefixes", encode: func(s string, first int) string {
		lines := strings.Split(s, "\n")
		for i := range lines {
			lines[i] = strconv.Itoa(first+i) + "\t" + lines[i]
		}
		return strings.Join(lines, "\n")
	}},
	{repair: `literal \n`, encode: func(s string, _ int) string {
		return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
	}},
	{repair: `literal \t`, indent: func(tabs bool) bool { return tabs }, encode: func(s string, _ int) string {
		out, _ := escapeLeadingTabs(s)
		return out
	}},
	{repair: "doubled backslashes", token: func(id int) string { return fmt.Sprintf(`re("\d+%d\s")`, id) },
		encode: func(s string, _ int) string { return strings.ReplaceAll(s, `\`, `\\`) }},
	{repair: `\"`, token: func(id int) string { return fmt.Sprintf(`say("s%d", "t")`, id) },
		encode: func(s string, _ int) string { return strings.ReplaceAll(s, `"`, `\"`) }},
	{repair: "JSON escapes", token: func(id int) string { return fmt.Sprintf(`say("s%d", "\t")`, id) },
		encode: func(s string, _ int) string { out, _ := json.Marshal(s); return string(out[1 : len(out)-1]) }},
	{repair: "HTML entities", token: func(id int) string { return fmt.Sprintf(`a%d < b && c > "d"`, id) },
		encode: func(s string, _ int) string { out, _ := encodeEntities(true)(s); return out }},
	{repair: "a Markdown code fence", encode: func(s string, _ int) string { return "```python\n" + s + "\n```" }},
	{repair: typographic.name, token: func(id int) string { return fmt.Sprintf(`say("s%d") - 'x'`, id) },
		encode: func(s string, _ int) string {
			return strings.NewReplacer(`("`, `(“`, `"`, `”`, ` '`, ` ‘`, `'`, `’`, " - ", " — ").Replace(s)
		}},
	{repair: typographic.name, indent: func(tabs bool) bool { return !tabs }, // NBSP indentation
		encode: func(s string, _ int) string {
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				ind := indentOf(l)
				lines[i] = strings.Repeat("\u00a0", len(ind)) + l[len(ind):]
			}
			return strings.Join(lines, "\n")
		}},
	{repair: typographic.name, token: func(id int) string { return fmt.Sprintf(`say(“s%d”) — it’s…`, id) },
		encode: func(s string, _ int) string { return fold(s).text }},
}

// TestRepairWritesFileCharacters is the property of every repair: on
// generated files (tabs, two or four spaces) and edits (a block changed,
// a line added), old and new written with one slip — alone, or with
// another indentation as well, so that the re-indentation runs — apply to
// exactly the file with the clean edit, in the file's characters and
// indentation; and no kind of mark the repair took out of old is written
// where the file has none, nor indentation the file does not use.
func TestRepairWritesFileCharacters(t *testing.T) {
	t.Parallel()
	styles := []style{{tabs: true, unit: tabWidth, known: true}, {unit: 2, known: true}, {unit: 4, known: true}}
	slipped := map[[2]int]int{} // by encoder and reindent: the edits that show the slip
	for ei, enc := range slipEncoders {
		for _, st := range styles {
			for _, reindent := range []bool{false, true} {
				rng := rand.New(rand.NewPCG(uint64(ei), uint64(st.unit)))
				// the model's indentation: the file's, or another
				model := st
				if reindent {
					model = styles[(slices.Index(styles, st)+1)%len(styles)]
				}
				if enc.indent != nil && !enc.indent(model.tabs) {
					continue
				}
				name := fmt.Sprintf("%d %s/%s/reindent=%v", ei, enc.repair, st.render(8), reindent)
				for n := 0; n < 30; n++ {
					c := genEdit(rng, enc, st, model)
					checkProperty(t, name, enc, c)
					if c.slipped {
						slipped[[2]int{ei, boolInt(reindent)}]++
					}
				}
			}
		}
		for _, reindent := range []int{0, 1} {
			if n := slipped[[2]int{ei, reindent}]; n < 20 {
				t.Errorf("%d %s, reindent=%d: only %d edits with the slip", ei, enc.repair, reindent, n)
			}
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// genCase is a generated file, an edit in the file's characters, the same
// edit as the model writes it, and the expected result.
type genCase struct {
	file, want string
	old, new   string // as the model sends them
	slipped    bool   // the slip changed old (one line at level 0 has no indentation to slip on)
}

func genEdit(rng *rand.Rand, enc slipEncoder, file, model style) genCase {
	token := enc.token
	if token == nil {
		token = func(id int) string { return fmt.Sprintf("v%d = call(%d)", id, id) }
	}
	n := 6 + rng.IntN(10)
	levels := make([]int, n)
	for i := 1; i < n; i++ {
		levels[i] = max(0, levels[i-1]+rng.IntN(3)-1)
	}
	text := token
	render := func(st style, level, base int, body string) string {
		return st.render((level-base)*st.unit) + body
	}
	var lines []string
	for i := range n {
		lines = append(lines, render(file, levels[i], 0, text(i)))
	}
	k := 1 + rng.IntN(min(4, n))
	if enc.repair == `literal \n` || enc.repair == "JSON escapes" {
		k = max(k, 2) // written on one line, old must have had several
	}
	s := rng.IntN(n - k + 1)
	// the edit: line j changed, a line added after it at its level
	j := s + rng.IntN(k)
	var cleanNew, modelOld, modelNew []string
	base := 0
	if model != file {
		base = levels[s] // the model also drops the block's base level
		for i := s; i < s+k; i++ {
			base = min(base, levels[i])
			if strings.Contains(strings.Join(lines, "\n"), render(model, levels[i], base, text(i))) {
				base = 0 // unless old is then in the file as it is, to be replaced as it is
				break
			}
		}
	}
	for i := s; i < s+k; i++ {
		modelOld = append(modelOld, render(model, levels[i], base, text(i)))
		body := text(i)
		if i == j {
			body = text(i) + " + " + token(100+i)
		}
		cleanNew = append(cleanNew, render(file, levels[i], 0, body))
		modelNew = append(modelNew, render(model, levels[i], base, body))
		if i == j {
			cleanNew = append(cleanNew, render(file, levels[i], 0, token(200+i)))
			modelNew = append(modelNew, render(model, levels[i], base, token(200+i)))
		}
	}
	join := func(ls []string) string { return strings.Join(ls, "\n") }
	c := genCase{
		file: join(lines) + "\n",
		want: join(slices.Concat(lines[:s], cleanNew, lines[s+k:])) + "\n",
		old:  enc.encode(join(modelOld), s+1),
		new:  enc.encode(join(modelNew), s+1),
	}
	c.slipped = c.old != join(modelOld)
	return c
}

func checkProperty(t *testing.T, name string, enc slipEncoder, c genCase) {
	t.Helper()
	o, err := ApplyFile("f", []byte(c.file), []Edit{{Old: c.old, New: c.new}})
	if err != nil {
		t.Errorf("%s: refused:\nfile %q\nold  %q\nnew  %q\n%v", name, c.file, c.old, c.new, err)
		return
	}
	if got := string(o.Content); got != c.want {
		t.Errorf("%s:\nfile %q\nold  %q\nnew  %q\ngot  %q\nwant %q", name, c.file, c.old, c.new, got, c.want)
		return
	}
	if !c.slipped {
		return // nothing to repair (old has no indentation to write with the slip)
	}
	if o.Edits[0].Repair != enc.repair {
		t.Errorf("%s: repaired %q, want %q", name, o.Edits[0].Repair, enc.repair)
		return
	}
	checkWritten(t, []byte(c.file), o.Edits[0].Repair, Edit{Old: c.old, New: c.new}, o.regions[0])
}
