package config

import (
	"os"
	"strings"
	"testing"
)

// The README's table of keys ignored until trusted is this list, row for
// row: what the user reads is what mm does.
func TestREADMEListsUntrustedKeys(t *testing.T) {
	b, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(b), "| ignored until trusted | why |")
	if start < 0 {
		t.Fatal("README has no table of keys ignored until trusted")
	}
	table := strings.Split(string(b)[start:], "\n\n")[0]
	for _, u := range UntrustedKeys {
		if !strings.Contains(table, "| `"+u.Key+"` | "+u.Why+" |") {
			t.Errorf("README table lacks %s — %s", u.Key, u.Why)
		}
	}
	if n := strings.Count(table, "\n| `"); n != len(UntrustedKeys) {
		t.Errorf("README table has %d rows, mm ignores %d keys", n, len(UntrustedKeys))
	}
}
