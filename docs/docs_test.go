// Package docs_test keeps the manual honest: the README stays a front
// door, every page of docs/ is reachable from it, every relative link and
// anchor of every Markdown file leads somewhere, and nothing points to
// documents that are not in the repository.
package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

const root = ".."

// markdown returns every Markdown file of the repository (relative to
// its root), but test inputs (testdata) and what tools installed.
func markdown(t *testing.T) []string {
	t.Helper()
	return files(t, ".md")
}

// files returns every file of the repository whose name ends in ext
// (relative to its root), but test inputs (testdata) and what tools
// installed.
func files(t *testing.T, ext string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ext) {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found %d %s files: is the root right?", len(files), ext)
	}
	return files
}

// page is a Markdown file's prose (outside code fences, inline code
// removed) line by line, and its anchors.
type page struct {
	lines   []string
	anchors map[string]bool
}

var codeSpan = regexp.MustCompile("`+[^`]*`+")

func read(t *testing.T, rel string) page {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	p := page{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			p.lines = append(p.lines, "")
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			p.lines = append(p.lines, "")
			continue
		}
		if h, ok := strings.CutPrefix(line, "#"); ok {
			s := slug(strings.TrimLeft(h, "#"))
			if n := seen[s]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				p.anchors[s] = true
			}
			seen[s]++
		}
		p.lines = append(p.lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// slug is the anchor GitHub gives a heading: lower case, spaces as
// hyphens, and only letters, digits, hyphens and underscores kept.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// links returns the relative links of a page's prose, as written.
func (p page) links() []string {
	var out []string
	for _, l := range p.lines {
		for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(l, ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, target)
		}
	}
	return out
}

// TestLinksResolve: every relative link of every Markdown file names a
// file or directory of the repository, and every anchor a heading of the
// page it names.
func TestLinksResolve(t *testing.T) {
	pages := map[string]page{}
	get := func(rel string) page {
		if p, ok := pages[rel]; ok {
			return p
		}
		pages[rel] = read(t, rel)
		return pages[rel]
	}
	for _, rel := range markdown(t) {
		for _, target := range get(rel).links() {
			file, anchor, _ := strings.Cut(target, "#")
			dest := rel
			if file != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(rel), file))
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s links %s, which does not exist", rel, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !get(dest).anchors[anchor] {
				t.Errorf("%s links %s: %s has no heading with that anchor", rel, target, dest)
			}
		}
	}
}

// TestREADMEIsAFrontDoor: the README stays short, and every page of
// docs/ is one click away from it.
func TestREADMEIsAFrontDoor(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n > 300 {
		t.Errorf("README.md has %d lines; the front door stays within 300 — move the detail to a page of docs/", n)
	}
	linked := read(t, "README.md").links()
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if !slices.ContainsFunc(linked, func(l string) bool { return strings.HasPrefix(l, "docs/"+p) }) {
			t.Errorf("README.md does not link docs/%s", p)
		}
	}
}

// privateID looks like the ids of the specification mm was written
// from, which is not part of the repository: one of its letter groups
// followed by a number. Names that only look like one are listed in
// notAnID.
var privateID = regexp.MustCompile(`\b(?:E|T|A|F|TR|C|P|L|S|I|ED)[0-9]{1,2}\b`)

var notAnID = map[string]bool{
	"L12": true, // a line-number prefix models copy ("L12: ")
}

// outside are references to documents that are not in the repository:
// the specification, its notes and source documents, and the tracker of
// the team that wrote mm. Matches that only look like one are listed in
// notOutside.
var outside = regexp.MustCompile(`\.\./shared|\bSPEC\b(?:\.md)?|\bARCHITECTURE\.md|\b[Ii]ssue [0-9]+|\bseeds?\b(?: corp|:tool_call| %d)?`)

var notOutside = map[string]bool{
	"seed corp":      true, // Go's fuzzing "seed corpus"
	"seed:tool_call": true, // Seed-OSS's tool-call markup
	"seed %d":        true, // the random number a test started from
}

// privateRefs returns what in text (one line) names a document outside
// the repository, each with the reason to give.
func privateRefs(text string) []string {
	var out []string
	for _, id := range privateID.FindAllString(text, -1) {
		if !notAnID[id] {
			out = append(out, fmt.Sprintf("%q looks like an id of a document outside the repository: say what it means", id))
		}
	}
	for _, m := range outside.FindAllString(text, -1) {
		if !notOutside[m] {
			out = append(out, fmt.Sprintf("%q names a document outside the repository", m))
		}
	}
	return out
}

// TestNoPrivateReferences: the Markdown of the repository stands alone.
func TestNoPrivateReferences(t *testing.T) {
	for _, rel := range markdown(t) {
		for i, l := range read(t, rel).lines {
			for _, r := range privateRefs(l) {
				t.Errorf("%s:%d: %s", rel, i+1, r)
			}
		}
	}
}

// TestNoPrivateReferencesInGo: so do the comments and strings of the
// Go code (identifiers are code, not references: a test named TestE2E is
// left alone).
func TestNoPrivateReferencesInGo(t *testing.T) {
	fset := token.NewFileSet()
	for _, rel := range files(t, ".go") {
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		var s scanner.Scanner
		s.Init(fset.AddFile(rel, -1, len(src)), src, nil, scanner.ScanComments)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.COMMENT && tok != token.STRING && tok != token.CHAR {
				continue
			}
			line := fset.Position(pos).Line
			for i, l := range strings.Split(lit, "\n") {
				for _, r := range privateRefs(l) {
					t.Errorf("%s:%d: %s", rel, line+i, r)
				}
			}
		}
	}
}
