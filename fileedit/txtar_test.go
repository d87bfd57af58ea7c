package fileedit

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// update rewrites the want.* sections of the golden files from what the
// code produces; review the diff before committing.
var update = flag.Bool("update", false, "rewrite the want sections of testdata/golden")

// A case file is a txtar archive: "key: value" header lines, then sections
// "-- name --". Sections:
//
//	file          the file content before the edit
//	old, new      the edit (or old1/new1, old2/new2, … for several)
//	want.*        expected results
//
// old and new lose the final "\n" every section has, so an old that ends
// with a newline ends with an empty line in the file. Escapes make invisible
// bytes visible: <CR> is "\r", <BOM> the UTF-8 BOM, <TAB> a tab, <SP> a
// space, and a section ending with "<noeol>" has no final newline. Header
// keys: path (name used in messages, default main.go), crlf (the file
// section uses CRLF line endings), bom (the file starts with a BOM).
type caseFile struct {
	path     string
	header   []string // raw header lines, kept for -update
	keys     map[string][]string
	sections []section
}

type section struct {
	name, data string // data as written in the file (escapes not decoded)
}

func readCase(t testing.TB, path string) *caseFile {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &caseFile{path: path, keys: map[string][]string{}}
	lines := strings.SplitAfter(string(raw), "\n")
	var cur *section
	for _, l := range lines {
		if l == "" {
			continue
		}
		trim := strings.TrimSuffix(l, "\n")
		if strings.HasPrefix(trim, "-- ") && strings.HasSuffix(trim, " --") && len(trim) > 6 {
			c.sections = append(c.sections, section{name: trim[3 : len(trim)-3]})
			cur = &c.sections[len(c.sections)-1]
			continue
		}
		if cur == nil {
			c.header = append(c.header, trim)
			if k, v, ok := strings.Cut(trim, ":"); ok && !strings.Contains(k, " ") {
				c.keys[k] = append(c.keys[k], strings.TrimSpace(v))
			}
			continue
		}
		cur.data += l
	}
	return c
}

func (c *caseFile) key(k string) string {
	if v := c.keys[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (c *caseFile) section(name string) (string, bool) {
	for _, s := range c.sections {
		if s.name == name {
			return unescape(s.data), true
		}
	}
	return "", false
}

// input builds the file content and the edits of a case.
func (c *caseFile) input(t testing.TB) (name string, content []byte, edits []Edit) {
	t.Helper()
	name = c.key("path")
	if name == "" {
		name = "main.go"
	}
	file, ok := c.section("file")
	if !ok {
		t.Fatalf("%s: no file section", c.path)
	}
	if c.key("crlf") == "true" {
		file = strings.ReplaceAll(file, "\n", "\r\n")
	}
	if c.key("bom") == "true" {
		file = bom + file
	}
	arg := func(name string) (string, bool) {
		s, ok := c.section(name)
		return strings.TrimSuffix(s, "\n"), ok
	}
	if old, ok := arg("old"); ok {
		new, _ := arg("new")
		edits = append(edits, Edit{Old: old, New: new})
	}
	for i := 1; ; i++ {
		old, ok := arg("old" + strconv.Itoa(i))
		if !ok {
			break
		}
		new, _ := arg("new" + strconv.Itoa(i))
		edits = append(edits, Edit{Old: old, New: new})
	}
	return name, []byte(file), edits
}

func unescape(s string) string {
	if strings.HasSuffix(s, "<noeol>\n") {
		s = strings.TrimSuffix(s, "<noeol>\n")
	}
	return strings.NewReplacer("<CR>", "\r", "<BOM>", bom, "<TAB>", "\t", "<SP>", " ", "<NUL>", "\x00").Replace(s)
}

// visible renders bytes for a want section: CR and BOM are made visible,
// and a missing final newline is marked.
func visible(b []byte) string {
	s := strings.NewReplacer("\r", "<CR>", bom, "<BOM>").Replace(string(b))
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "<noeol>\n"
	}
	return s
}

// write rewrites the case with its want.* sections replaced.
func (c *caseFile) write(t testing.TB, want map[string]string) {
	t.Helper()
	var b bytes.Buffer
	for _, h := range c.header {
		b.WriteString(h + "\n")
	}
	for _, s := range c.sections {
		if strings.HasPrefix(s.name, "want.") {
			continue
		}
		b.WriteString("-- " + s.name + " --\n" + s.data)
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString("-- " + n + " --\n" + want[n])
	}
	if err := os.WriteFile(c.path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func caseFiles(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in testdata/%s: %v", dir, err)
	}
	return files
}

func withNL(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// sectionDiff shows where a want section and the result part.
func sectionDiff(name, want, got string) string {
	return fmt.Sprintf("%s differs:\n--- want\n%s--- got\n%s", name, want, got)
}
