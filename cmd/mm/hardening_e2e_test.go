package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPUserEditDuringPromptIsKept (issue 9, defect 1): the user edits
// the file while the editor shows the permission prompt of the model's
// edit, then allows it. mm reads the file again before writing, keeps the
// user's text byte for byte, and tells the model the file changed.
func TestACPUserEditDuringPromptIsKept(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "user_edit_during_prompt")
	file := w.write("hello.txt", "hello world\n")
	mine := "hello world, said the user\n"
	p := w.session()
	p.OnAsk(func(sdk.RequestPermissionRequest) { writeFile(t, file, mine) })
	p.turn("Say goodbye in hello.txt")
	if got := readFile(t, file); got != mine {
		t.Errorf("the user's edit was overwritten: %q", got)
	}
	reqs := w.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if last := reqs[2].Last(); last.Role != "tool" || !strings.Contains(last.Content, "hello.txt changed since you read it") {
		t.Errorf("the model was not told the file changed: %q", last.Content)
	}
	p.asked(1)
}

// TestLineBashEnvHoldsNoSecret (issue 9, defect 2): `env` run by the model
// shows ordinary variables but no secret — MM_API_KEY, the variable named
// by apiKeyEnv, *_KEY/*TOKEN*/*PASSWORD* names — except those bashEnv.keep
// lets through; the key printed from a file is masked; the log file never
// holds the key although the server gets it.
func TestLineBashEnvHoldsNoSecret(t *testing.T) {
	t.Parallel()
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
	_, stderr, code := runInProcess(t, dir, trusted(t, dir, env), "", "-p", "show me the environment", "--yes")
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
	wantIn(t, "the command's output", out, "ORDINARY_SETTING=plain-value", "LANG=C.UTF-8", "GITHUB_TOKEN=ghp-kept-on-purpose", "PATH=", "HOME=", "key= auth=", "stored=[redacted]")
	home := ""
	for _, kv := range env {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = h
		}
	}
	if log := readFile(t, filepath.Join(home, "mm.log")); strings.Contains(log, key) || log == "" {
		t.Errorf("the log holds the key (or is empty):\n%s", log)
	}
	// Nothing mm wrote — the session store in the state directory, the
	// remembered answers, the log — holds the key.
	var files int
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		files++
		if b, _ := os.ReadFile(p); strings.Contains(string(b), key) {
			t.Errorf("%s holds the API key", p)
		}
		return nil
	})
	if files < 2 {
		t.Errorf("%d files under HOME: the session was not stored where the test looks", files)
	}
	if strings.Contains(stderr, key) {
		t.Errorf("stderr shows the key:\n%s", stderr)
	}
}

// TestLineWriteFaultLeavesOriginal (issue 9, fault tests): a write that
// fails — the file-size limit reached as on a full disk (EFBIG, which
// stops root too), or a read-only directory — leaves the original file
// byte-identical, no temporary file behind, and the model is told the
// file is unchanged.
func TestLineWriteFaultLeavesOriginal(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"file size limit", "read-only directory"} {
		t.Run(fault, func(t *testing.T) {
			big := varied(100_000)
			srv := llmtest.NewServer(llmtest.Scenario{NCtx: 262144, Steps: []llmtest.Step{
				{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Args: map[string]any{"path": "f.txt"}}}},
				{ToolCalls: []llmtest.ToolCall{{Name: "write_file", Args: map[string]any{"path": "f.txt", "content": big}}}},
				{Content: "I could not write it."},
			}})
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			original := "the original\ncontent\n"
			writeFile(t, filepath.Join(dir, "f.txt"), original)
			script := `exec "$0" "$@"`
			if fault == "file size limit" {
				script = `trap '' XFSZ; ulimit -f 64; exec "$0" "$@"` // 64 KiB
			} else {
				testenv.ReadOnlyDir(t, dir)
			}
			cmd := exec.Command("bash", "-c", script, mmBin(t), "-p", "rewrite f.txt", "--yes")
			cmd.Dir, cmd.Env = dir, mmEnv(t, srv)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Logf("mm: %v\n%s", err, out)
			}
			if got := readFile(t, filepath.Join(dir, "f.txt")); got != original {
				t.Errorf("the original changed (%d bytes)", len(got))
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("the directory holds %v, want f.txt alone", names)
			}
			reqs := srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model requests, want 3; output:\n%s", len(reqs), out)
			}
			msgs := reqs[2].Messages
			if last := msgs[len(msgs)-1].Content; !strings.Contains(last, "could not write f.txt") || !strings.Contains(last, "the file is unchanged") {
				t.Errorf("the model was not told: %q", last)
			}
		})
	}
}

// varied is n bytes of text that never repeats itself, as a real file
// would not (the runaway detector stops a call whose arguments loop).
func varied(n int) string {
	var b strings.Builder
	x := uint64(1)
	for i := 0; b.Len() < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		fmt.Fprintf(&b, "line %d: value %x of %x\n", i, x>>20, x%99991)
	}
	return b.String()
}

// TestLineSandboxLandlock (issue 9, optional confinement): with sandbox:
// landlock, even in yolo mode a command cannot write outside the
// workspace and the temp dir — not even as root — while writing inside
// still works.
func TestLineSandboxLandlock(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	outside := fmt.Sprintf("/mm-sandbox-test-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(outside) })
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "bash", Args: map[string]any{
			"command": "echo x > " + outside + "; echo in > src/inside.txt; t=$(mktemp) && echo tmp > $t && echo temp-ok",
		}}}},
		{Content: "Done."},
	}})
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ".mm", "agent.yaml"), "sandbox: landlock\nyolo: true\n")
	os.Mkdir(filepath.Join(dir, "src"), 0o755) // a confined command creates no file at the root
	_, stderr, code := runInProcess(t, dir, trusted(t, dir, mmEnv(t, srv)), "", "-p", "write files")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("the sandboxed command wrote %s", outside)
	}
	if got := readFile(t, filepath.Join(dir, "src", "inside.txt")); got != "in\n" {
		t.Errorf("src/inside.txt = %q", got)
	}
	msgs := srv.Requests()[1].Messages
	out := msgs[len(msgs)-1].Content
	if !strings.Contains(out, "Permission denied") || !strings.Contains(out, "temp-ok") {
		t.Errorf("the command's output:\n%s", out)
	}
}
