package shell

import (
	"strings"
	"testing"

	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

// TestLineAsItWillRun: every form that spells a command other than its
// words show is read as bash (or env) reads it — a deny rule refuses it,
// an answer or a rule covers only what will run.
func TestLineAsItWillRun(t *testing.T) {
	env := newEnv(t)
	deny := permit.NewPolicy(true, nil, []string{"bash:rm *"})
	for _, line := range []string{
		"{rm,-f,x}",
		"bash --norc -c 'true && rm x'",
		"bash -o errexit -c 'cd . && rm x'",
		"sh -ec 'true; rm x'",
		"bash --rcfile /dev/null -c 'true; rm x'",
		`find . -exec sh -c 'cd . && rm "$1"' _ {} \;`,
		"env -S 'rm -f x'",
		"env --split-string='rm -f x'",
		"echo 'rm x' | bash",
		"bash <<'EOF'\ntrue; rm x\nEOF",
		"shopt -s expand_aliases\nalias r=rm\nr x",
		"PATH=.; ls x",
	} {
		if got, why := decide(deny, env, line); got != "refuse" {
			t.Errorf("%q under the deny rule bash:rm *: %s (%s)", line, got, why)
		}
	}
	for _, line := range []string{"ls -la", "git status", "echo '{a,b}'", "bash -c 'ls'"} {
		if got, why := decide(deny, env, line); got == "refuse" {
			t.Errorf("%q refused by bash:rm *: %s", line, why)
		}
	}
	rules := permit.NewPolicy(false, []string{"bash:touch *", "bash:sort *", "bash:cat *"}, nil)
	for _, line := range []string{"touch -- -o.envrc && sort *", "sort * & touch -- -oX", "cat ~root/x", "cat ~nobody/x"} {
		if got, why := decide(rules, env, line); got != "ask" {
			t.Errorf("%q under rules for touch, sort and cat: %s (%s), want ask", line, got, why)
		}
	}
	if got, why := decide(rules, env, "sort *"); got != "allow" {
		t.Errorf("sort * alone: %s (%s), want allow", got, why)
	}
	if a := approvalOf(env, "cat ~nosuchuser-mm/x"); a.Parts[0].Key == "" {
		t.Errorf("~nosuchuser stays a relative path in bash, inside the workspace: %+v", a.Parts[0])
	}
	for line, key := range map[string]string{"git apply fix.patch": "= git apply fix.patch", "git am x.mbox": "= git am x.mbox"} {
		if got := approvalOf(env, line).Parts[0].Key; got != key {
			t.Errorf("%q keyed %q, want %q", line, got, key)
		}
	}
	for _, line := range []string{"mm trust --yes", "./mm trust", "$(which mm) trust"} {
		if a := approvalOf(env, line); !strings.Contains(a.RunsLater, "mm trust") {
			t.Errorf("%q: runs later %q, want mm trust named", line, a.RunsLater)
		}
	}
	for _, line := range []string{"echo x > ~/.config/mm/agent.yaml", "tee -a ~/.config/mm/agent.yaml"} {
		home := env.cwd + "/home"
		a := Approval(t.Context(), env, line, line, []string{"HOME=" + home})
		found := false
		for _, l := range a.Locations {
			found = found || strings.HasPrefix(l.Path, home+"/.config/mm/")
		}
		if !found {
			t.Errorf("%q: the write outside the workspace is not among its locations %v", line, a.Locations)
		}
	}
}

// TestReadOnlyCommands: what plan mode runs is what the analysis proves
// reads the workspace only.
func TestReadOnlyCommands(t *testing.T) {
	env := newEnv(t)
	for line, ro := range map[string]bool{
		"ls -la": true, "git log --oneline": true, "grep -rn x .": true, "cat a | head -5": true,
		"git status && git diff": true, "cd src && ls": true,
		"git commit -m x": false, "sort -o y x": false, "ls > out": false, "find . -delete": false,
		"python3 x.py": false, "cat ../x": false, "rg --pre sh x": false, "echo $(rm x)": false,
		"FOO=1 ls": false, "sudo ls": false, "/bin/ls": false,
	} {
		if got := approvalOf(env, line).Caps == tools.Reads; got != ro {
			t.Errorf("%q read-only: %v, want %v", line, got, ro)
		}
	}
}

// A rule names a command, not the variables set for it: they change what
// it does (LD_PRELOAD, git's own settings).
func TestRulesDoNotCoverAssignments(t *testing.T) {
	env := newEnv(t)
	p := permit.NewPolicy(false, []string{"bash:git diff*"}, nil)
	for _, line := range []string{"LD_PRELOAD=./x.so git diff", "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=sh git diff"} {
		if got, why := decide(p, env, line); got != "ask" {
			t.Errorf("%q under bash:git diff*: %s (%s), want ask", line, got, why)
		}
	}
	if got, why := decide(p, env, "git diff"); got != "allow" {
		t.Errorf("git diff: %s (%s)", got, why)
	}
}
