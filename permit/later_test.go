package permit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/permit/runlater"
	"github.com/mm-agent/mm/tools"
)

// A write to a file that runs later is asked in every mode — yolo,
// accept-edits, an allow rule, an "always" answer, a hook's allow — and
// an "always" answer to it counts once. A deny rule, plan mode and a
// "never" still refuse without asking.
func TestPolicyAsksForFilesThatRunLater(t *testing.T) {
	root := t.TempDir()
	write := func(rel string) tools.Approval {
		abs := filepath.Join(root, rel)
		return tools.Approval{Tool: "write_file", Kind: tools.KindEdit, Caps: tools.Reads | tools.WritesWorkspace, Title: "Write " + rel, Key: "write_file", Subject: rel,
			Diffs: []tools.Diff{{Path: abs}}, Locations: []tools.Location{{Path: abs}}}
	}
	named := filepath.Join(root, "scripts", "check.sh")
	newPolicy := func(yolo bool, allow, deny []string) *permit.Policy {
		p := permit.NewPolicy(yolo, allow, deny)
		p.WatchRunLater(&runlater.RunLater{Root: root, Named: map[string]string{named: "a hook mm runs"}})
		return p
	}
	for _, mode := range []permit.Mode{permit.ModeYolo, permit.ModeAcceptEdits, permit.ModeAsk} {
		p := newPolicy(false, []string{"write_file"}, nil)
		p.SetMode(mode)
		p.Remember(write("main.go"), true)
		for _, rel := range []string{".git/hooks/pre-commit", ".vscode/tasks.json", "scripts/check.sh"} {
			a := write(rel)
			a.Hook = tools.HookAllow
			if _, ok := p.Decide(a); ok {
				t.Errorf("%s: %s decided without asking", mode, rel)
			}
			var asked string
			d, err := p.Approve(context.Background(), a, func(_ context.Context, req tools.Approval) (permit.Answer, error) {
				asked = req.Title
				return permit.AllowAlways, nil
			})
			if err != nil || !d.Allowed || !strings.Contains(asked, "⚠ "+rel+" runs later") {
				t.Errorf("%s: %s: allowed=%v, question %q", mode, rel, d.Allowed, asked)
			}
			if _, ok := p.Decide(a); ok {
				t.Errorf("%s: an always answer to %s was remembered", mode, rel)
			}
		}
		if d, ok := p.Decide(write("main.go")); !ok || !d.Allowed {
			t.Errorf("%s: an ordinary file asks", mode)
		}
	}
	// nobody to ask: refused, saying why
	p := newPolicy(true, nil, nil)
	d, _ := p.Approve(context.Background(), write(".envrc"), nil)
	if d.Allowed || !strings.Contains(d.Reason, ".envrc runs later") || !strings.Contains(d.Reason, "do not answer for it") {
		t.Errorf("no one to ask: %+v", d)
	}
	// refusals still refuse without a question
	p = newPolicy(false, nil, []string{"write_file:.git/*"})
	if d, ok := p.Decide(write(".git/config")); !ok || d.Allowed {
		t.Errorf("the deny rule did not win: %+v %v", d, ok)
	}
	p.SetMode(permit.ModePlan)
	if d, ok := p.Decide(write(".envrc")); !ok || d.Allowed {
		t.Errorf("plan mode asked: %+v %v", d, ok)
	}
}

// A path that reaches a file that runs later through a link — a
// directory linked to .git, a file linked to .envrc, dangling or not — is
// refused without a question in every mode, the reason naming the file it
// leads to; an approval that also names where it lands (bash lists both)
// is asked instead. Landing refuses the same at the moment of writing.
func TestPolicyRefusesWritesThroughLinksToFilesThatRunLater(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{".git/hooks", "src"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n"), 0o644)
	for link, target := range map[string]string{"cfg": ".git", "docs": filepath.Join(root, ".git"), "notes.txt": ".envrc", "lib": "src", "hook.sh": "scripts/check.sh"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skip("no symlinks here:", err)
		}
	}
	named := filepath.Join(root, "scripts", "check.sh")
	write := func(rel string, more ...string) tools.Approval {
		abs := filepath.Join(root, rel)
		a := tools.Approval{Tool: "write_file", Kind: tools.KindEdit, Caps: tools.Reads | tools.WritesWorkspace, Title: "Write " + rel, Key: "write_file", Subject: rel,
			Diffs: []tools.Diff{{Path: abs}}, Locations: []tools.Location{{Path: abs}}}
		for _, m := range more {
			a.Locations = append(a.Locations, tools.Location{Path: filepath.Join(root, m)})
		}
		return a
	}
	for _, mode := range []permit.Mode{permit.ModeYolo, permit.ModeAcceptEdits} {
		p := permit.NewPolicy(false, []string{"write_file"}, nil)
		p.SetMode(mode)
		p.WatchRunLater(&runlater.RunLater{Root: root, Named: map[string]string{named: "a hook mm runs"}})
		for rel, to := range map[string]string{"cfg/hooks/pre-commit": ".git/hooks/pre-commit", "notes.txt": ".envrc", "docs/config": ".git/config", "hook.sh": "scripts/check.sh"} {
			d, ok := p.Decide(write(rel))
			if !ok || d.Allowed || !strings.Contains(d.Reason, rel+" leads, through a link, to "+to+", which runs later") || !strings.Contains(d.Reason, "write "+to+" itself") {
				t.Errorf("%s: %s: decided=%v %+v, want refused naming %s", mode, rel, ok, d, to)
			}
			if err := p.Landing(filepath.Join(root, rel), tools.Real(filepath.Join(root, rel))); !errors.Is(err, permit.ErrRunsLater) {
				t.Errorf("%s: Landing(%s) = %v, want ErrRunsLater", mode, rel, err)
			}
		}
		if _, ok := p.Decide(write("cfg/hooks/pre-commit", ".git/hooks/pre-commit")); ok {
			t.Errorf("%s: an approval naming where it lands was not asked", mode)
		}
		if d, ok := p.Decide(write("lib/main.go")); !ok || !d.Allowed {
			t.Errorf("%s: a link to an ordinary directory: %+v %v", mode, d, ok)
		}
		if err := p.Landing(filepath.Join(root, "lib/main.go"), filepath.Join(root, "src/main.go")); err != nil {
			t.Errorf("%s: Landing through an ordinary link: %v", mode, err)
		}
		if err := p.Landing(filepath.Join(root, ".envrc"), filepath.Join(root, ".envrc")); err != nil {
			t.Errorf("%s: Landing on the very file asked about: %v", mode, err)
		}
	}
}
