package bash

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	cases := map[string]string{
		"plain\n":                                  "plain\n",
		"\x1b[32mok\x1b[0m\n":                      "ok\n",
		"\x1b[2K\x1b[1Gdone\n":                     "done\n",
		"\x1b]0;title\x07text":                     "text",
		"\x1b]8;;http://a\x1b\\link\x1b]8;;\x1b\\": "link",
		"a\x1b=b\x1b>c":                            "abc",
		"\x1b(Bx":                                  "x",
		"1%\r50%\r100%\n":                          "100%\n",
		"win\r\nline\r\n":                          "win\nline\n",
		"_\bu_\bn":                                 "un",
		"bad \xff\xfe byte":                        "bad \uFFFD byte",
		"cut at end \x1b[":                         "cut at end ",
		"é\b!":                                     "!",
	}
	for in, want := range cases {
		if got := clean([]byte(in)); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRenderShortOutputUntouched(t *testing.T) {
	o := output{head: "a\nb\n"}
	if got := o.render(100); got != "a\nb\n" {
		t.Errorf("got %q", got)
	}
}

func TestRenderCountsCharactersNotBytes(t *testing.T) {
	s := strings.Repeat("é", 100) // 200 bytes, 100 characters
	if got := (output{head: s}).render(100); got != s {
		t.Errorf("100 characters were cut at a limit of 100")
	}
	got := (output{head: strings.Repeat("é", 1000)}).render(100)
	if !utf8.ValidString(got) {
		t.Error("a cut split a character")
	}
	if !strings.Contains(got, "[… 0 lines (900 chars) of 1 cut here.") {
		t.Errorf("got %q", got)
	}
}

func TestRenderUnreadMiddle(t *testing.T) {
	o := output{head: strings.Repeat("h\n", 5000), tail: strings.Repeat("t\n", 5000), unread: 3 << 20}
	got := o.render(1000)
	if !strings.HasPrefix(got, "h\nh\n") || !strings.HasSuffix(got, "t\nt\n") || !strings.Contains(got, "[… about 3.0 MiB cut here") {
		t.Errorf("got %q", got)
	}
	if n := strings.Count(got, "h\n") + strings.Count(got, "t\n"); n > 510 {
		t.Errorf("kept %d lines for 1000 chars", n)
	}
}
