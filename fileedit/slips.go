package fileedit

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// slip is one way a model wraps or encodes text it copied right: the
// listing's line numbers, JSON escapes left in, HTML entities, a code
// fence. Each has exactly one reading, applied to old and new alike.
type slip struct {
	// name says what the slip is, for the refusal that saw it.
	name string
	// did says what the repair did, for the result line: "removing
	// line-number prefixes from old and new".
	did string
	// advice tells the model what to send next time.
	advice string
	// hint is the sentence a refusal adds when old shows the slip.
	hint string
	// fix reads old and new through the slip. seen is false when old does
	// not show it; fits is false when new shows it in another way than old
	// (a listing mixed with plain lines, some quotes escaped and some not),
	// so that the reading of new is not certain.
	fix func(old, new string) (o, n string, l listing, seen, fits bool)
	// inFile reports whether the file itself holds text of the slip's form
	// (entities in an HTML page, fences in a Markdown file): it may then be
	// content the model meant, not a slip. nil when that cannot matter.
	inFile func(text string) bool
	// marks counts the slip's marks in a text: what its reading takes out
	// of old, which the written text must not bring back where the file
	// has none (marks.go).
	marks markCounter
}

// listing describes the line-number prefixes removed from old: the number
// of its first line and the separator, so that the repair can check them
// against the file.
type listing struct {
	first int    // number of old's first line
	sep   string // "\t", ":", "|", "│", "→"
	lines int    // numbered lines
}

// slips are tried in this order; when two readings agree, the first names
// the repair.
var slips = []*slip{
	{
		name: "line-number prefixes", did: "removing line-number prefixes from old and new",
		advice: "send the file's text without them",
		hint:   "old must not contain the line numbers shown by read_file: copy only the text after them.",
		fix:    fixNumbers,
		marks:  linesLike("line numbers", numberedLine),
	},
	{
		name: `literal \n`, did: `turning the two characters \n and \t into line breaks and tabs in old and new`,
		advice: "write real line breaks and tabs",
		hint:   `old contains the two characters \n: write real line breaks instead.`,
		fix:    fixNewlines,
		marks:  substrings(`\n`, `\t`),
	},
	{
		name: `literal \t`, did: `turning the \t that start lines into tabs in old and new`,
		advice: "write a real tab",
		hint:   `old starts a line with the two characters \t: write a real tab instead.`,
		fix:    fixLeadingTabs,
		marks:  linesLike(`\t`, func(l string) bool { return strings.HasPrefix(l, `\t`) }),
	},
	{
		name: "doubled backslashes", did: "halving the doubled backslashes in old and new",
		advice: "write each backslash once, as the file has it",
		hint:   `old has every backslash doubled (\\): write them as the file has them.`,
		fix:    fixBackslashes,
		marks:  substrings(`\\`),
	},
	{
		name: `\"`, did: `turning \" into " in old and new`,
		advice: "write quotes without a backslash",
		hint:   `old writes \" for ": write the quotes as the file has them.`,
		fix:    fixQuotes,
		marks:  substrings(`\"`),
	},
	{
		name: "JSON escapes", did: `decoding old and new, which were escaped twice (\n, \", \\)`,
		advice: "send the file's text as it is, escaped once",
		hint:   `old looks escaped twice (\n, \", \\): send the file's text as it is.`,
		fix:    fixJSON,
		marks:  substrings(`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u`),
	},
	{
		name: "HTML entities", did: "decoding the HTML entities (&lt; &gt; &amp; &quot;) in old and new",
		advice: "write the characters themselves",
		hint:   "old holds HTML entities (&lt; &amp; …): write the characters themselves.",
		fix:    fixEntities,
		inFile: hasEntity,
		marks:  class("HTML entities", entityNames...),
	},
	{
		name: "a Markdown code fence", did: "removing the Markdown code fence around old and new",
		advice: "send only the file's lines",
		hint:   "old is wrapped in a Markdown code fence (```): send only the file's lines.",
		fix:    fixFence,
		inFile: hasFenceLine,
		marks:  linesLike("```", fenceLine),
	},
}

// splitTerm splits off a final "\n", which is a line end, not a line.
func splitTerm(s string) (lines []string, term string) {
	if strings.HasSuffix(s, "\n") {
		s, term = s[:len(s)-1], "\n"
	}
	return strings.Split(s, "\n"), term
}

// numberPrefix matches the line numbers of a listing: mm's read_file
// ("12\t"), cat -n ("    12\t"), "12 | ", "12: ", "12→", "L12: ". One
// space after a visible separator belongs to it.
var numberPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ *L?(\d{1,7})(\t|→| ?[:|│] ?)`) })

// numberOnly is a blank line of a listing whose trailing separator was
// trimmed: "   12".
var numberOnly = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ *L?(\d{1,7}) *$`) })

// unnumber reads one line of a listing: its number, separator and text.
func unnumber(line string) (n int, sep, text string, ok bool) {
	if m := numberPrefix().FindStringSubmatchIndex(line); m != nil {
		n, _ = strconv.Atoi(line[m[2]:m[3]])
		return n, strings.Trim(line[m[4]:m[5]], " "), line[m[1]:], true
	}
	if m := numberOnly().FindStringSubmatch(line); m != nil {
		n, _ = strconv.Atoi(m[1])
		return n, "", "", true
	}
	return 0, "", "", false
}

// fixNumbers removes line-number prefixes. old must be a listing: every
// line numbered with one separator, the numbers consecutive (an empty line
// counts as a line whose number was dropped). new is either numbered the
// same way on every non-empty line (its numbers may restart: added lines
// have none of their own) or not numbered at all.
func fixNumbers(old, new string) (string, string, listing, bool, bool) {
	lines, term := splitTerm(old)
	l := listing{first: -1}
	out := make([]string, len(lines))
	for i, line := range lines {
		if line == "" {
			continue
		}
		n, sep, text, ok := unnumber(line)
		if !ok {
			return "", "", listing{}, false, false
		}
		if l.first < 0 {
			l.first = n - i
		}
		if sep != "" {
			if l.sep == "" {
				l.sep = sep
			} else if sep != l.sep {
				return "", "", listing{}, false, false
			}
		}
		if n != l.first+i {
			return "", "", listing{}, false, false
		}
		out[i] = text
		l.lines++
	}
	if l.lines == 0 || l.sep == "" {
		return "", "", listing{}, false, false
	}
	o := strings.Join(out, "\n") + term
	nl, nterm := splitTerm(new)
	numbered, plain := 0, 0
	for i, line := range nl {
		if line == "" {
			continue
		}
		if _, sep, text, ok := unnumber(line); ok && (sep == l.sep || sep == "") {
			nl[i] = text
			numbered++
		} else {
			plain++
		}
	}
	switch {
	case numbered == 0:
		return o, new, l, true, true
	case plain == 0:
		return o, strings.Join(nl, "\n") + nterm, l, true, true
	}
	return o, new, l, true, false
}

// fixNewlines decodes the two characters \n and \t of a text written on one
// line; a doubled backslash stays as it is.
func fixNewlines(old, new string) (string, string, listing, bool, bool) {
	if strings.Contains(old, "\n") {
		return "", "", listing{}, false, false
	}
	o, ok := decodeNT(old)
	if !ok {
		return "", "", listing{}, false, false
	}
	n := new
	if d, _ := decodeNT(new); d != new {
		if strings.Contains(new, "\n") {
			// new has real line breaks: it was not written on one line,
			// so its \n may be code.
			return o, new, listing{}, true, false
		}
		n = d
	}
	return o, n, listing{}, true, true
}

// decodeNT turns \n into a line break and \t into a tab; ok when there was
// at least one \n.
func decodeNT(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, false
	}
	var b strings.Builder
	nl := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch s[i+1] {
		case 'n':
			b.WriteByte('\n')
			nl = true
		case 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(c)
			b.WriteByte(s[i+1])
		}
		i++
	}
	return b.String(), nl
}

// fixLeadingTabs turns \t written at the start of a line into a tab: a
// Makefile recipe typed with the escape instead of the character.
func fixLeadingTabs(old, new string) (string, string, listing, bool, bool) {
	o, seen := leadingTabs(old)
	if !seen {
		return "", "", listing{}, false, false
	}
	n, _ := leadingTabs(new)
	return o, n, listing{}, true, true
}

func leadingTabs(s string) (string, bool) {
	lines := strings.Split(s, "\n")
	seen := false
	for i, l := range lines {
		k := 0
		for strings.HasPrefix(l[k:], `\t`) {
			k += 2
		}
		if k > 0 {
			lines[i] = strings.Repeat("\t", k/2) + l[k:]
			seen = true
		}
	}
	return strings.Join(lines, "\n"), seen
}

// backslashRuns calls f with the length of every run of backslashes and
// the byte after it (0 at the end).
func backslashRuns(s string, f func(n int, next byte)) {
	for i := 0; i < len(s); {
		if s[i] != '\\' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '\\' {
			j++
		}
		var next byte
		if j < len(s) {
			next = s[j]
		}
		f(j-i, next)
		i = j
	}
}

// fixBackslashes halves backslashes when every one of old is doubled.
func fixBackslashes(old, new string) (string, string, listing, bool, bool) {
	even := func(s string) (ok, any bool) {
		ok = true
		backslashRuns(s, func(n int, _ byte) {
			any = true
			ok = ok && n%2 == 0
		})
		return ok, any
	}
	if ok, any := even(old); !ok || !any {
		return "", "", listing{}, false, false
	}
	o := strings.ReplaceAll(old, `\\`, `\`)
	if ok, _ := even(new); !ok {
		return o, new, listing{}, true, false
	}
	return o, strings.ReplaceAll(new, `\\`, `\`), listing{}, true, true
}

// fixQuotes turns \" into " when every backslash of old escapes a quote.
func fixQuotes(old, new string) (string, string, listing, bool, bool) {
	quotes := func(s string) (ok, any bool) {
		ok = true
		backslashRuns(s, func(n int, next byte) {
			any = true
			ok = ok && n == 1 && next == '"'
		})
		return ok, any
	}
	if ok, any := quotes(old); !ok || !any {
		return "", "", listing{}, false, false
	}
	o := strings.ReplaceAll(old, `\"`, `"`)
	if ok, _ := quotes(new); !ok {
		return o, new, listing{}, true, false
	}
	return o, strings.ReplaceAll(new, `\"`, `"`), listing{}, true, true
}

// fixJSON decodes a text that is the body of a JSON string — every quote
// escaped, no raw line break, only JSON escapes — as a model that escaped
// its arguments twice sends it.
func fixJSON(old, new string) (string, string, listing, bool, bool) {
	o, ok := jsonBody(old)
	if !ok || o == old {
		return "", "", listing{}, false, false
	}
	if !strings.Contains(new, `\`) {
		return o, new, listing{}, true, true
	}
	n, ok := jsonBody(new)
	return o, n, listing{}, true, ok
}

// jsonBody decodes s as the inside of a JSON string: no bare quote, no raw
// control character, only JSON escapes.
func jsonBody(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	var out string
	if err := json.Unmarshal([]byte(`"`+s+`"`), &out); err != nil {
		return "", false
	}
	return out, true
}

// entities are the HTML entities a model writes for the characters of
// code; others (&nbsp;, &eacute;) have no single ASCII reading and are
// left alone.
var entities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`,
	"&#39;", "'", "&#x27;", "'", "&apos;", "'", "&#34;", `"`)

// entityNames are the entities entities decodes.
var entityNames = []string{"&lt;", "&gt;", "&amp;", "&quot;", "&#39;", "&#x27;", "&apos;", "&#34;"}

func hasEntity(s string) bool {
	for _, e := range entityNames {
		if strings.Contains(s, e) {
			return true
		}
	}
	return false
}

// fixEntities decodes HTML entities, once.
func fixEntities(old, new string) (string, string, listing, bool, bool) {
	if !hasEntity(old) {
		return "", "", listing{}, false, false
	}
	return entities.Replace(old), entities.Replace(new), listing{}, true, true
}

// fenceOpen and fenceClose are the first and last lines of a Markdown code
// block.
var (
	fenceOpen  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^ {0,3}(```|~~~)[\\w+#.-]*[ \t]*$") })
	fenceClose = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^ {0,3}(```|~~~)[ \t]*$") })
)

func hasFenceLine(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimLeft(l, " ")
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			return true
		}
	}
	return false
}

// unfence removes the opening and closing fence lines of s; ok when s is
// fenced.
func unfence(s string) (string, bool) {
	lines, term := splitTerm(s)
	for len(lines) > 0 && isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	for len(lines) > 0 && isBlank(lines[0]) {
		lines = lines[1:]
	}
	if len(lines) < 3 || !fenceOpen().MatchString(lines[0]) || !fenceClose().MatchString(lines[len(lines)-1]) {
		return "", false
	}
	if fenceOf(lines[0]) != fenceOf(lines[len(lines)-1]) {
		return "", false
	}
	return strings.Join(lines[1:len(lines)-1], "\n") + term, true
}

func fenceOf(l string) string { return strings.TrimLeft(l, " ")[:3] }

// fixFence removes a code fence around old, and around new when it has one.
func fixFence(old, new string) (string, string, listing, bool, bool) {
	o, ok := unfence(old)
	if !ok {
		return "", "", listing{}, false, false
	}
	if n, ok := unfence(new); ok {
		return o, n, listing{}, true, true
	}
	if hasFenceLine(new) {
		return o, new, listing{}, true, false
	}
	return o, new, listing{}, true, true
}
