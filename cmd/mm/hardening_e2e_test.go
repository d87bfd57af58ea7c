package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestACPUserEditDuringPromptIsKept (issue 9, defect 1): the user edits
// the file while the editor shows the permission prompt of the model's
// edit, then allows it. mm reads the file again before writing, keeps the
// user's text byte for byte, and tells the model the file changed.
func TestACPUserEditDuringPromptIsKept(t *testing.T) {
	srv := scenario(t, "user_edit_during_prompt")
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.txt")
	writeFile(t, file, "hello world\n")
	mine := "hello world, said the user\n"

	p := startAgent(t, dir, mmEnv(t, srv))
	p.client.onAsk = func(sdk.RequestPermissionRequest) { writeFile(t, file, mine) }
	ctx := testContext(t)
	id := p.session(t, ctx, dir)
	if _, err := p.prompt(ctx, id, "Say goodbye in hello.txt"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, file); got != mine {
		t.Errorf("the user's edit was overwritten: %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	msgs := reqs[2].Messages
	if last := msgs[len(msgs)-1]; last.Role != "tool" || !strings.Contains(last.Content, "hello.txt changed since you read it") {
		t.Errorf("the model was not told the file changed: %q", last.Content)
	}
	_, perms := p.client.snapshot()
	if len(perms) != 1 {
		t.Errorf("permission asked %d times, want 1", len(perms))
	}
}

// TestLineBashEnvHoldsNoSecret (issue 9, defect 2): `env` run by the model
// shows ordinary variables but no secret — MM_API_KEY, the variable named
// by apiKeyEnv, *_KEY/*TOKEN*/*PASSWORD* names — except those bashEnv.keep
// lets through; the key printed from a file is masked; the log file never
// holds the key although the server gets it.
func TestLineBashEnvHoldsNoSecret(t *testing.T) {
	srv := scenario(t, "bash_env")
	dir := t.TempDir()
	const key = "sk-mm-test-0123456789abcdef"
	writeFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "apiKeyEnv: LLM_AUTH\nbashEnv:\n  keep: [GITHUB_TOKEN]\n  drop: [MY_INTERNAL_*]\n")
	writeFile(t, filepath.Join(dir, "secret.txt"), "stored="+key+"\n")
	env := mmEnv(t, srv,
		"MM_API_KEY="+key,
		"LLM_AUTH="+key,
		"OPENAI_API_KEY=sk-openai-should-not-leak",
		"AWS_SECRET_ACCESS_KEY=aws-should-not-leak",
		"DB_PASSWORD=db-should-not-leak",
		"my_credentials=lower-should-not-leak",
		"MY_INTERNAL_URL=internal-should-not-leak",
		"GITHUB_TOKEN=ghp-kept-on-purpose",
		"ORDINARY_SETTING=plain-value",
		"LANG=C.UTF-8",
	)
	_, stderr, code := runMM(t, dir, env, "", "-p", "show me the environment", "--yes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("the server did not get the key: %q", got)
	}
	msgs := reqs[1].Messages
	out := msgs[len(msgs)-1].Content
	for _, leak := range []string{key, "should-not-leak"} {
		if strings.Contains(out, leak) {
			t.Errorf("the model saw %q:\n%s", leak, out)
		}
	}
	for _, want := range []string{"ORDINARY_SETTING=plain-value", "LANG=C.UTF-8", "GITHUB_TOKEN=ghp-kept-on-purpose", "PATH=", "HOME=", "key= auth=", "stored=[redacted]"} {
		if !strings.Contains(out, want) {
			t.Errorf("the command's output lacks %q:\n%s", want, out)
		}
	}
	home := ""
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	if log := readFile(t, filepath.Join(home, "mm.log")); strings.Contains(log, key) || log == "" {
		t.Errorf("the log holds the key (or is empty):\n%s", log)
	}
	if strings.Contains(stderr, key) {
		t.Errorf("stderr shows the key:\n%s", stderr)
	}
}

// TestLogMasksTheKey: a server error that echoes the key is logged
// without it.
func TestLogMasksTheKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mm.log")
	log, closeLog, err := openLog(path, nil, "acp", "sk-secret-value-42")
	if err != nil {
		t.Fatal(err)
	}
	log.Warn("server said sk-secret-value-42 is bad", "err", errors.New("401: key sk-secret-value-42 refused"), "n", 3)
	closeLog()
	got := readFile(t, path)
	if strings.Contains(got, "sk-secret-value-42") || strings.Count(got, "[redacted]") != 2 || !strings.Contains(got, "n=3") {
		t.Errorf("log:\n%s", got)
	}
}
