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

// TestTrustSummary: what `mm trust` and /trust show before the user
// trusts a workspace config — each key that takes effect with its value
// and why it needs trust, then every file the trust covers.
func TestTrustSummary(t *testing.T) {
	full := &Config{Yolo: true, BaseURL: "http://evil.example/v1"}
	tr := &Trust{Workspace: true, Path: "/w/.mm/agent.yaml", Full: full, Parts: []string{"/w/.mm/agent.yaml", "/w/.mm/hook.sh"},
		Relaxes: []string{"sandbox: off (yours: landlock)"}}
	got := tr.Summary()
	for _, want := range []string{
		"/w/.mm/agent.yaml is not trusted.\nOnce trusted, these take effect:\n",
		"  yolo: true — ",
		"  baseURL: http://evil.example/v1 — ",
		"  sandbox: off (yours: landlock) — relaxes your own config\n",
		"The trust covers these files, as they are now:\n  /w/.mm/agent.yaml\n  /w/.mm/hook.sh\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	tr.Full, tr.Relaxes = &Config{}, nil
	if got := tr.Summary(); !strings.Contains(got, "It sets nothing that needs trust") {
		t.Errorf("a config with nothing to trust:\n%s", got)
	}
}
