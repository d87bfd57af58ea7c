package fileedit

import (
	"bytes"
	"errors"
	"go/format"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestGolden runs every case of testdata/golden — one or more per rule of
// the package doc — and compares the model-visible results (the summary, the new
// content, the numbered diff, or the refusal text) with the want sections.
// Run with -update to rewrite them. Header keys checked besides:
//
//	expect: applied | refused   (keeps -update from a silent flip)
//	loose: N                    Outcome.Loose
//	gofmt: true                 the result is gofmt-clean Go
//	kind: ErrX                  errors.Is(err, ErrX) for a refusal
func TestGolden(t *testing.T) {
	for _, path := range caseFiles(t, "golden") {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			c := readCase(t, path)
			name, content, edits := c.input(t)
			before := bytes.Clone(content)
			o, err := ApplyFile(name, content, edits)
			if !bytes.Equal(content, before) {
				t.Fatal("ApplyFile modified its input")
			}
			got := map[string]string{}
			if err != nil {
				got["want.error"] = withNL(err.Error())
			} else {
				got["want.summary"] = withNL(o.Summary)
				got["want.content"] = visible(o.Content)
				got["want.diff"] = Diff(name, content, o.Content)
			}
			checkHeader(t, c, o, err)
			if *update {
				c.write(t, got)
				return
			}
			for n, g := range got {
				w, ok := c.section(n)
				if n == "want.content" {
					w, ok = rawSection(c, n)
				}
				if !ok {
					t.Errorf("missing section %s; got:\n%s", n, g)
					continue
				}
				if w != g {
					t.Error(sectionDiff(n, w, g))
				}
			}
			for _, s := range c.sections {
				if _, ok := got[s.name]; strings.HasPrefix(s.name, "want.") && !ok {
					t.Errorf("section %s expected, but the call %s", s.name, map[bool]string{true: "was refused: " + errText(err), false: "was applied"}[err != nil])
				}
			}
		})
	}
}

// rawSection returns a section as written (escapes kept), to compare with
// visible().
func rawSection(c *caseFile, name string) (string, bool) {
	for _, s := range c.sections {
		if s.name == name {
			return s.data, true
		}
	}
	return "", false
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func checkHeader(t *testing.T, c *caseFile, o Outcome, err error) {
	t.Helper()
	switch c.key("expect") {
	case "applied":
		if err != nil {
			t.Fatalf("refused, want applied: %v", err)
		}
	case "refused":
		if err == nil {
			t.Fatalf("applied, want refused:\n%s", o.Content)
		}
		if len(o.Content) != 0 || o.Summary != "" {
			t.Fatal("a refusal returned content")
		}
	default:
		t.Fatalf("%s: header needs expect: applied | refused", c.path)
	}
	if l := c.key("loose"); l != "" {
		if n, _ := strconv.Atoi(l); n != o.Loose {
			t.Errorf("Loose = %d, want %s", o.Loose, l)
		}
	}
	if c.key("gofmt") == "true" {
		f, ferr := format.Source(o.Content)
		if ferr != nil || !bytes.Equal(f, o.Content) {
			t.Errorf("result is not gofmt-clean (%v):\n%s", ferr, o.Content)
		}
	}
	if k := c.key("kind"); k != "" {
		if !errors.Is(err, kinds[k]) {
			t.Errorf("errors.Is(err, %s) is false: %v", k, err)
		}
	}
}

var kinds = map[string]error{
	"ErrNoEdits":   ErrNoEdits,
	"ErrEmptyOld":  ErrEmptyOld,
	"ErrUnchanged": ErrUnchanged,
	"ErrNotFound":  ErrNotFound,
	"ErrAfterEdit": ErrAfterEdit,
	"ErrAmbiguous": ErrAmbiguous,
	"ErrOverlap":   ErrOverlap,
	"ErrBinary":    ErrBinary,
}
