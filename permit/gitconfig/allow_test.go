package gitconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecurityPageListsAllowedKeys: docs/security.md names every setting
// of the allowlist, so what users read is what mm allows.
func TestSecurityPageListsAllowedKeys(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range Allowed {
		if !strings.Contains(string(b), "`"+a.Key+"`") {
			t.Errorf("docs/security.md does not list `%s` (%s)", a.Key, a.Why)
		}
	}
}

func TestJudge(t *testing.T) {
	for _, c := range []struct {
		key, value string
		ok         bool
	}{
		{"credential.helper", "store", true},
		{"credential.helper", "cache --timeout=3600", true},
		{"credential.helper", "!f() { echo evil; }; f", false},
		{"credential.helper", "/tmp/evil", false},
		{"credential.https://example.com.helper", "manager", true},
		{"submodule.lib.update", "rebase", true},
		{"submodule.lib.update", "!touch pwned", false},
		{"submodule.lib.url", "https://example.com/lib.git", true},
		{"remote.origin.url", "ext::sh -c touch% pwned", false},
		{"remote.origin.url", "git@github.com:a/b.git", true},
		{"filter.lfs.process", "git-lfs filter-process", true},
		{"filter.lfs.process", "sh -c evil", false},
		{"diff.external", "evil", false},
		{"diff.m.textconv", "evil", false},
		{"diff.m.xfuncname", "^func", true},
		{"gpg.ssh.defaultkeycommand", "evil", false},
		{"man.evil.cmd", "evil", false},
		{"alias.st", "status", false},
		{"core.editor", "vim", true},
		{"core.sshcommand", "evil", false},
		{"core.worktree", "/", false},
		{"pager.log", "evil", true},
		{"advice.detachedhead", "false", true},
		{"advice.x.y", "false", false},
		{"no.such", "x", false},
	} {
		got := Judge(Setting{Key: c.key, Value: c.value}) == ""
		if got != c.ok {
			t.Errorf("%s = %q: allowed %v, want %v", c.key, c.value, got, c.ok)
		}
	}
}
