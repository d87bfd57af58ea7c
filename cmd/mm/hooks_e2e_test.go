package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/mm-agent/mm/internal/testenv"
)

// hookConfig writes the hook scripts and a config using them.
func hookConfig(t *testing.T, dir, hooksYAML string) {
	t.Helper()
	scripts := map[string]string{
		// Denies any bash command starting with rm, with a reason.
		"no-rm.sh": `input=$(cat)
case "$input" in
  *'"command":"rm '*) echo '{"decision":"deny","reason":"deleting files is forbidden in this project — ask the user to do it"}' ;;
esac`,
		"slow.sh":    "sleep 20",
		"garbage.sh": "echo 'yes please'",
		"rec.sh":     `cat > "$(dirname "$0")/payload.json"`,
		"ask.sh":     `echo '{"decision":"ask","reason":"reading files needs a yes here"}'`,
		"allow.sh":   `echo '{"decision":"allow","context":"allowed by the team hook"}'`,
		"frozen.sh":  "echo 'the repository is frozen for the release' >&2; exit 2",
		"rewrite.sh": `echo '{"prompt":"write hi to out.txt, politely"}'`,
	}
	for name, body := range scripts {
		p := filepath.Join(dir, ".mm", name)
		testenv.WriteFile(t, p, "#!/bin/sh\n"+body+"\n")
		os.Chmod(p, 0o755)
	}
	testenv.WriteFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "hooks:\n"+hooksYAML)
}

// hookWorld is a world on the named scenario whose workspace config,
// trusted, has the hooks of hooksYAML (and their scripts), and the files.
func hookWorld(t *testing.T, name, hooksYAML string, files map[string]string) *world {
	t.Helper()
	w := newWorld(t, name)
	w.writeAll(files)
	hookConfig(t, w.dir, hooksYAML)
	w.trust()
	return w
}

func TestHookDeniesRmACP(t *testing.T) {
	t.Parallel()
	w := hookWorld(t, "hook_deny_rm", "  preToolUse:\n    - {command: [./.mm/no-rm.sh], tools: [bash]}\n", map[string]string{"hello.txt": "hello\n"})
	p := w.session()
	p.turn("delete hello.txt")
	if b, err := os.ReadFile(filepath.Join(w.dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("hello.txt = %q, %v: the denied rm ran", b, err)
	}
	reqs := w.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if res := reqs[1].Last(); res.Role != "tool" || !strings.Contains(res.Content, "deleting files is forbidden in this project") || !strings.Contains(res.Content, "did not run") {
		t.Errorf("the model read %+v", res)
	}
	if perms := p.Permissions(); len(perms) != 0 {
		t.Errorf("a denied call asked permission %d times", len(perms))
	}
	if text := p.answer(); !strings.Contains(text, "_mm: ⚠ a hook denied bash: deleting files is forbidden") {
		t.Errorf("no ⚠ note for the user:\n%s", text)
	}
}

func TestHookIgnoredGoesThroughPermissionACP(t *testing.T) {
	t.Parallel()
	w := hookWorld(t, "hook_ignored", "  preToolUse:\n    - {command: [./.mm/slow.sh], timeout: 300ms}\n    - {command: [./.mm/garbage.sh]}\n    - {command: [./.mm/rec.sh]}\n", nil)
	dir := w.dir
	p := w.session()
	id := p.id
	p.turn("write hi to out.txt")
	p.asked(1) // the normal path
	if b, _ := os.ReadFile(filepath.Join(dir, "out.txt")); string(b) != "hi\n" {
		t.Errorf("out.txt = %q: the call did not go on", b)
	}
	payload, _ := os.ReadFile(filepath.Join(dir, ".mm", "payload.json"))
	testenv.WantIn(t, "the hook's stdin", string(payload), `"event":"preToolUse"`, `"sessionId":"`+string(id)+`"`, `"cwd":"`+dir+`"`, `"tool":"bash"`, `"arguments":{"command":"echo hi \u003e out.txt"}`)
	text := p.answer()
	testenv.WantIn(t, "the answer", text, "⚠ hook ./.mm/slow.sh timed out after 300ms — ignored", "⚠ hook ./.mm/garbage.sh printed something that is not one JSON object")
}

// Line mode: the same deny, and a hook's allow skips the question that
// line mode without a terminal could not ask (it would refuse).
func TestHooksLineMode(t *testing.T) {
	t.Parallel()
	w := hookWorld(t, "hook_deny_rm", "  preToolUse:\n    - {command: ./.mm/no-rm.sh}\n", map[string]string{"hello.txt": "hello\n"})
	_, stderr, _ := w.line("", "--yes", "-p", "delete hello.txt")
	if _, err := os.Stat(filepath.Join(w.dir, "hello.txt")); err != nil {
		t.Fatalf("hello.txt deleted despite the hook (even with --yes a deny wins)")
	}
	if !strings.Contains(stderr, "⚠ a hook denied bash: deleting files is forbidden") {
		t.Errorf("stderr:\n%s", stderr)
	}

	w = hookWorld(t, "hook_ignored", "  preToolUse:\n    - {command: [./.mm/allow.sh]}\n", nil)
	_, stderr, code := w.line("", "-p", "write hi to out.txt")
	if b, _ := os.ReadFile(filepath.Join(w.dir, "out.txt")); string(b) != "hi\n" || code != 0 {
		t.Errorf("out.txt = %q (exit %d): the hook's allow did not skip the question\n%s", b, code, stderr)
	}
	if last := lastMessage(w.srv); !strings.Contains(last.Content, "[hook: allowed by the team hook]") {
		t.Errorf("the hook's context is not under the output: %q", last.Content)
	}
}

// preGeneration: exit code 2 stops the turn before any model call, with
// stderr as the reason; a rewritten prompt is what the model gets.
func TestPreGenerationHookLineMode(t *testing.T) {
	t.Parallel()
	w := hookWorld(t, "hook_ignored", "  preGeneration:\n    - {command: [./.mm/frozen.sh]}\n", nil)
	srv := w.srv
	_, stderr, code := w.line("", "--yes", "-p", "write hi to out.txt")
	if code == 0 || len(srv.Requests()) != 0 || !strings.Contains(stderr, "turn stopped by a hook: the repository is frozen for the release") {
		t.Errorf("exit %d, %d requests, stderr:\n%s", code, len(srv.Requests()), stderr)
	}
	hookConfig(t, w.dir, "  preGeneration:\n    - {command: [./.mm/rewrite.sh]}\n")
	w.trust()
	if _, stderr, code := w.line("", "--yes", "-p", "write hi to out.txt"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if u := srv.Requests()[0].Last().Content; !strings.HasSuffix(u, "write hi to out.txt, politely") {
		t.Errorf("the model got %q", u)
	}
}

// A hook's ask on a call that never asks by itself (a read) asks the
// editor once; a reject means the call does not run.
func TestHookAskOnReadACP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		choose sdk.PermissionOptionKind
		ran    bool
	}{{sdk.PermissionOptionKindAllowOnce, true}, {sdk.PermissionOptionKindRejectOnce, false}} {
		t.Run(string(c.choose), func(t *testing.T) {
			w := hookWorld(t, "line_answer", "  preToolUse:\n    - {command: [./.mm/ask.sh], tools: [read_file]}\n", map[string]string{"hello.txt": "hello world\n"})
			p := w.session()
			p.Choose(c.choose)
			p.turn("what does hello.txt say?")
			p.asked(1)
			got := w.srv.Requests()[1].Last().Content
			if strings.Contains(got, "hello world") != c.ran {
				t.Errorf("read_file result %q (want ran=%v)", got, c.ran)
			}
		})
	}
}
