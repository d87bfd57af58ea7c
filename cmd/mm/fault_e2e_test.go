package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mm-agent/mm/acp/acptest"
	"github.com/mm-agent/mm/engine/llm/llmtest"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestACPHostileFiles runs mm over a Python workspace where
// `zero.py -> /dev/zero` and a FIFO `pipe.py` sit among the sources, with
// a 2 GB sparse log, and a model that edits (pyright's importer scan reads
// every .py file), reads each of them and runs `yes`. An unbounded read
// would run out of memory on the edit or hang on the FIFO, and an
// unbounded output fill $TMPDIR: each gets one repair text instead, the
// turn ends, and nothing reaches $TMPDIR.
func TestACPHostileFiles(t *testing.T) {
	t.Parallel()
	testenv.NeedLanguageServer(t, "pyright-langserver")
	tmp := t.TempDir()
	w := newWorld(t, "faults", "TMPDIR="+tmp)
	dir := w.dir
	w.writeAll(greetProject)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.py")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()

	w.session().endTurn("give greet a count, then look around")
	reqs := w.srv.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d model requests, want 7", len(reqs))
	}
	result := func(i int) string { return reqs[i].Last().Content }
	for i, want := range map[int]string{
		2: "1 edit applied",
		3: "pipe.py is not a regular file (a FIFO, a device or a socket)",
		4: "huge.log is 2.0 GiB, more than mm reads (8.0 MiB) — look at parts of it with bash",
		5: "zero.py is outside the workspace",
		6: "[the command printed 28.6 MiB; mm kept only its first and last 1.0 MiB]\n[exit code: 0 ",
	} {
		if got := result(i); !strings.Contains(got, want) {
			t.Errorf("tool result %d lacks %q:\n%.600s", i, want, got)
		}
	}
	if got := result(6); !strings.Contains(got, "\nlisted\n") || strings.Contains(got, "mm-bash") {
		t.Errorf("the command's output went to a file in $TMPDIR:\n%s", got[max(0, len(got)-300):])
	}
	if got := readFile(t, filepath.Join(dir, "greet.py")); !strings.HasPrefix(got, "def greet(name, times=1):") {
		t.Errorf("greet.py = %q", got)
	}
}

// TestACPSymlinkEscapes: a directory swapped for a link out of the
// workspace while the permission prompt is open, and a dangling link
// `notes.txt -> ../outside/notes.txt`, send no write outside — whether mm
// writes the disk (through os.Root) or the editor does
// (fs/write_text_file, checked right before). The model is told.
func TestACPSymlinkEscapes(t *testing.T) {
	t.Parallel()
	for _, editor := range []bool{false, true} {
		name := "disk"
		if editor {
			name = "editor"
		}
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "symlink_escape")
			w.dir = filepath.Join(w.dir, "ws")
			dir, outside := w.dir, filepath.Join(filepath.Dir(w.dir), "outside")
			for _, d := range []string{filepath.Join(dir, "sub"), outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink("../outside/notes.txt", filepath.Join(dir, "notes.txt")); err != nil {
				t.Fatal(err)
			}
			caps := sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: editor, WriteTextFile: editor}}
			p := w.serve(acptest.Options{Caps: caps})
			swapped := false
			p.OnAsk(func(sdk.RequestPermissionRequest) {
				if swapped {
					return
				}
				swapped = true // the prompt is open: sub/ becomes a link out
				if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
					t.Error(err)
				}
			})
			p.open()
			p.turn("write the files")
			if es, _ := os.ReadDir(outside); len(es) != 0 {
				t.Errorf("written outside the workspace: %v", es)
			}
			for _, c := range p.FileCalls() {
				if strings.HasPrefix(c, "write ") {
					t.Errorf("the editor was asked to write through a link out: %s", c)
				}
			}
			reqs := w.srv.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model requests, want 3", len(reqs))
			}
			for i := 1; i <= 2; i++ {
				if got := reqs[i].Last().Content; !strings.Contains(got, "outside the workspace") {
					t.Errorf("write %d: the model was not told: %q", i, got)
				}
			}
		})
	}
}

// TestACPResourceLinkOutside: a resource_link to a file outside the
// workspace reaches the model saying it is outside and was not read, not
// as a bare "[attached file: …]" its tools would then try in vain.
func TestACPResourceLinkOutside(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "short_answer")
	p := w.session()
	_, err := p.Conn.Prompt(w.ctx, sdk.PromptRequest{SessionId: p.id, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("what is in this file?"),
		sdk.ResourceLinkBlock("passwd", "file:///etc/passwd"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := w.srv.Requests()[0].Last().Content
	if !strings.Contains(got, "/etc/passwd was attached but is outside the workspace: it was not read") || strings.Contains(got, "[attached file: /etc/passwd]") {
		t.Errorf("the model got %q", got)
	}
}

// TestLineLandlockLinkToHome: under sandbox: landlock a command cannot
// write into $HOME, so it plants a link to there instead and asks
// write_file to follow it. The write is refused and $HOME stays
// untouched.
func TestLineLandlockLinkToHome(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	w := newWorldOn(t, calls(t, bashCall(`ln -s "$HOME/planted.txt" src/link.txt && echo linked`), writeCall("src/link.txt", "pwned\n")))
	os.Mkdir(filepath.Join(w.dir, "src"), 0o755) // a confined command creates no file at the root
	w.trustedConfig(map[string]string{"agent.yaml": "sandbox: landlock\nyolo: true\n"})
	w.lineOK("", "-p", "write the file")
	if _, err := os.Stat(filepath.Join(homeOf(w.env), "planted.txt")); err == nil {
		t.Fatal("write_file followed a planted link into $HOME")
	}
	reqs := w.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if got := reqs[2].Last().Content; !strings.Contains(got, "outside the workspace") {
		t.Errorf("the model was not told: %q", got)
	}
}

// TestACPUserEditDuringPromptIsKept: the user edits the file while the
// editor shows the permission prompt of the model's edit, then allows it.
// mm reads the file again before writing, keeps the user's text byte for
// byte, and tells the model the file changed.
func TestACPUserEditDuringPromptIsKept(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "user_edit_during_prompt")
	file := w.write("hello.txt", "hello world\n")
	mine := "hello world, said the user\n"
	p := w.session()
	p.OnAsk(func(sdk.RequestPermissionRequest) { testenv.WriteFile(t, file, mine) })
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

// TestLineWriteFaultLeavesOriginal: a write that fails — the file-size
// limit reached as on a full disk (EFBIG, which stops root too), or a
// read-only directory — leaves the original file byte-identical, no
// temporary file behind, and the model is told the file is unchanged.
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
			testenv.WriteFile(t, filepath.Join(dir, "f.txt"), original)
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
