package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestPictureIsCurrent records the README's picture again — the real mm,
// the session's scenario served in process — and holds the committed
// docs/mm-at-work.svg to it, digits aside: when mm's line mode changes
// what it shows, the picture is drawn again (./scripts/picture).
func TestPictureIsCurrent(t *testing.T) {
	t.Parallel()
	mm, err := testenv.Build("../../cmd/mm", "mm")
	if err != nil {
		t.Fatal(err)
	}
	s, err := loadSession()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := llmtest.Parse(s.scenario)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer(sc)
	defer srv.Close()
	work := t.TempDir()
	svg, err := picture(testenv.Context(t), s, mm, srv.URL(), work)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "ws", "greet.go")); !strings.Contains(string(b), `return "Hello, " + name + "!"`) {
		t.Errorf("the run did not fix greet.go:\n%s", b)
	}
	if srv.Remaining() != 0 {
		t.Errorf("%d steps of the scenario were not used", srv.Remaining())
	}
	committed, err := os.ReadFile("../../docs/mm-at-work.svg")
	if err != nil {
		t.Fatal(err)
	}
	if diff := compare(committed, svg); diff != "" {
		t.Errorf("docs/mm-at-work.svg is not what mm shows now (rerun ./scripts/picture):\n%s", diff)
	}
}

// TestScreen: what the terminal shows is what the picture draws.
func TestScreen(t *testing.T) {
	for _, c := range []struct {
		name, in string
		text     []string
		svg      string // a piece of the picture
	}{
		{"plain lines", "a\r\nb\r\n", []string{"a", "b"}, ">a</text>"},
		{"dim, then reset", "\x1b[2mthinking\x1b[0m done", []string{"thinking done"}, `<tspan class="d">thinking</tspan> done`},
		{"bold red", "\x1b[1;31m✗\x1b[0m Run", []string{"✗ Run"}, `<tspan class="b c31">✗</tspan> Run`},
		{"a carriage return overwrites", "12345\rab", []string{"ab345"}, ">ab345<"},
		{"erase to the end of the line", "progress 10%\r\x1b[Kdone", []string{"done"}, ">done<"},
		{"tabs to the next stop of 8", "ok\tgreet", []string{"ok      greet"}, ">ok      greet<"},
		{"markup is escaped", `<a & "b">`, []string{`<a & "b">`}, "&lt;a &amp; &#34;b&#34;&gt;"},
		{"private modes and titles are not text", "\x1b[?25l\x1b]0;title\ahi\x1b[?25h", []string{"hi"}, ">hi<"},
		{"a long line wraps", strings.Repeat("x", cols+2), []string{strings.Repeat("x", cols), "xx"}, ">xx<"},
		{"trailing blank lines go", "a\r\n\r\n\r\n", []string{"a"}, ">a<"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s screen
			s.write([]byte(c.in))
			if got := s.text(); !slices.Equal(got, c.text) {
				t.Errorf("text = %q, want %q", got, c.text)
			}
			svg := s.svg("t")
			if !strings.Contains(string(svg), c.svg) {
				t.Errorf("the picture lacks %q:\n%s", c.svg, svg)
			}
			lines, err := textLines(svg)
			if err != nil || !slices.Equal(lines, c.text) {
				t.Errorf("read back: %q, %v; want %q", lines, err, c.text)
			}
		})
	}
}

// TestCompareIgnoresDigits: durations, token counts and the session id
// change from run to run; words do not.
func TestCompareIgnoresDigits(t *testing.T) {
	draw := func(lines ...string) []byte {
		var s screen
		s.write([]byte(strings.Join(lines, "\r\n")))
		return s.svg("t")
	}
	a := draw("[exit code: 1 · 0.4s]", "[session sess_0a43ffbf7cbe5aff11e8ee72]")
	if d := compare(a, draw("[exit code: 1 · 11.0s]", "[session sess_3fbf1fd45a06de124189ba07]")); d != "" {
		t.Errorf("runs differing in digits compare unequal:\n%s", d)
	}
	if d := compare(a, draw("[exit status: 1 · 0.4s]", "[session sess_0a43ffbf7cbe5aff11e8ee72]")); !strings.Contains(d, "line 1") {
		t.Errorf("a changed word went unseen: %q", d)
	}
	if d := compare(a, draw("[exit code: 1 · 0.4s]")); !strings.Contains(d, "line 2") {
		t.Errorf("a missing line went unseen: %q", d)
	}
}
