package fileedit

import (
	"errors"
	"strings"
	"testing"
)

func TestApplyExact(t *testing.T) {
	src := []byte("a\nb\nc\n")
	o, err := ApplyFile("x.txt", src, []Edit{{Old: "b", New: "B"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(o.Content); got != "a\nB\nc\n" {
		t.Fatalf("content = %q", got)
	}
	if o.Summary != "1 edit applied" || o.Loose != 0 {
		t.Fatalf("summary = %q, loose = %d", o.Summary, o.Loose)
	}
	if string(src) != "a\nb\nc\n" {
		t.Fatal("input modified")
	}
}

func TestApplyRefusalsAreErrors(t *testing.T) {
	src := []byte("x\nx\n")
	_, err := ApplyFile("x.txt", src, []Edit{{Old: "x", New: "y"}})
	var fe *Error
	if !errors.As(err, &fe) || !errors.Is(err, ErrAmbiguous) {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "lines 1, 2") {
		t.Fatalf("text = %s", err)
	}
}
