package fileedit

import (
	"strings"
	"testing"
	"time"
)

// TestNearestLongLine: a mistyped old in a minified one-line file of 1 MiB
// is refused fast, pointing at line 1, without pasting the whole line back.
func TestNearestLongLine(t *testing.T) {
	line := strings.Repeat("var a=1;function f(){return a+1};", 1<<15)
	old := line[1000:1400]
	typo := old[:200] + "X" + old[201:]
	start := time.Now()
	_, err := ApplyFile("", []byte(line+"\n"), []Edit{{Old: typo, New: "y"}})
	if err == nil {
		t.Fatal("applied a mistyped old")
	}
	msg := err.Error()
	if !strings.Contains(msg, "The nearest line is 1") || !strings.Contains(msg, "Long lines were cut") {
		t.Fatalf("unexpected text: %.600s", msg)
	}
	if !strings.Contains(msg, old[:150]) {
		t.Errorf("the excerpt does not show the text around old: %.600s", msg)
	}
	if len(msg) > 2000 {
		t.Errorf("repair text is %d bytes; a long line must be cut", len(msg))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestOnlyWhitespaceOld: an old of blank lines that is not in the file
// gets a precise instruction instead of a search for similar lines.
func TestOnlyWhitespaceOld(t *testing.T) {
	_, err := ApplyFile("", []byte("a\nb\n"), []Edit{{Old: "  \n\t\n  ", New: "x"}})
	if err == nil || !strings.Contains(err.Error(), "only blank lines or spaces") {
		t.Fatalf("err = %v", err)
	}
}

// TestNearestInvalidUTF8LongLine: a long line of bytes that start no
// character (found by FuzzApply) is cut without panicking.
func TestNearestInvalidUTF8LongLine(t *testing.T) {
	line := strings.Repeat("\x83", 700)
	_, err := ApplyFile("", []byte("0\n"+line+"\n"), []Edit{{Old: line[:300] + "x" + line[301:650], New: "y"}})
	if err == nil {
		t.Fatal("applied a mistyped old")
	}
}
