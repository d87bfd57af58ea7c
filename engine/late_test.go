package engine_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/files"
	"github.com/mm-agent/mm/tools/lsptool"
	"github.com/mm-agent/mm/tools/workspace"
)

// slowServer is the disk, except that writing one file pauses the
// language servers (SIGSTOP to their process groups) for a while: the
// answer to that edit's check then comes after the edit's result, as on
// a machine too busy to answer in time.
type slowServer struct {
	workspace.Disk
	file  string
	pause time.Duration
}

func (s slowServer) WriteFile(ctx context.Context, p string, b []byte, m fs.FileMode) error {
	if p == s.file {
		groups := childGroups()
		for _, g := range groups {
			_ = syscall.Kill(-g, syscall.SIGSTOP)
		}
		time.AfterFunc(s.pause, func() {
			for _, g := range groups {
				_ = syscall.Kill(-g, syscall.SIGCONT)
			}
		})
	}
	return s.Disk.WriteFile(ctx, p, b, m)
}

// childGroups lists the process groups of this process's children (the
// language servers, each started in its own group).
func childGroups() []int {
	self := strconv.Itoa(os.Getpid())
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[1] == self {
			if g, err := strconv.Atoi(f[2]); err == nil && g != os.Getpid() {
				out = append(out, g)
			}
		}
	}
	return out
}

// TestLateDiagnosticsBeforeTurnEnds: the model breaks app.py by changing
// greet.py, pyright answers only after the edit's result, and the model
// ends its turn: the turn waits for the answer and gives it to the
// model, once, which then reacts — instead of ending on a broken edit.
func TestLateDiagnosticsBeforeTurnEnds(t *testing.T) {
	testenv.NeedTool(t, "pyright-langserver")
	dir := t.TempDir()
	for name, text := range map[string]string{
		"pyproject.toml": "",
		"greet.py":       "def greet(name: str) -> str:\n    return \"hello \" + name\n",
		"app.py":         "from greet import greet\n\nMESSAGE: str = greet(\"bob\")\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir, _ = filepath.EvalSymlinks(dir)
	cfg := lspbridge.DefaultConfig()
	cfg.BaseDir = dir
	// The first check (the server's initial analysis) has the upper
	// bound; this one is short so that the paused server misses it.
	cfg.Wait, cfg.MaxWait = time.Second, time.Second
	m := lspbridge.New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = m.Close(ctx)
	})
	// The server's first check, done before the turn: the session's
	// server is warm.
	for deadline := time.Now().Add(3 * time.Minute); ; {
		_, note, err := m.Diagnostics(context.Background(), filepath.Join(dir, "app.py"))
		if err == nil && note == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pyright not ready in 3 minutes: %v %s", err, note)
		}
	}
	late := lspbridge.NewLate()
	ws, err := workspace.New(workspace.Options{Cwd: dir, Policy: tools.NewPolicy(true, nil, nil),
		Files: slowServer{file: filepath.Join(dir, "greet.py"), pause: 3 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry(files.New(files.Options{MaxTokens: 4096, Diagnostics: lsptool.EditHook{Manager: m, Late: late}})...)
	s, srv := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("read_file", `{"path":"greet.py"}`)}},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("edit_file", `{"path":"greet.py","edits":[{"old":"def greet(name: str) -> str:","new":"def greet(name: str, times: int) -> str:"}]}`)}},
		llmtest.Step{Content: "Done: greet takes times."},
		llmtest.Step{Content: "app.py calls greet without times; I will fix it next."},
		// Turn 2: the edit is undone, and its check is late again; the
		// model reads app.py while the check ends (it thinks for 15 s).
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("edit_file", `{"path":"greet.py","edits":[{"old":"def greet(name: str, times: int) -> str:","new":"def greet(name: str) -> str:"}]}`)}},
		llmtest.Step{Silence: 15 * time.Second, ToolCalls: []llmtest.ToolCall{call("read_file", `{"path":"app.py"}`)}},
		llmtest.Step{Content: "greet is back as it was."},
	), func(o *engine.Options) {
		o.Tools, o.Env, o.Late = reg, ws, late
	})
	var notes []string
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	end := s.Run(ctx, "add a times parameter to greet", func(e engine.Event) {
		if st, ok := e.(engine.Struggle); ok {
			notes = append(notes, st.Text)
		}
	})
	if end.Reason != engine.EndTurn {
		t.Fatalf("turn ended %v (%s)", end.Reason, end.Err)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4 (the last after the late answer)", len(reqs))
	}
	editResult := reqs[2].Messages[len(reqs[2].Messages)-1]
	if strings.Contains(editResult.Content, "app.py:3:") {
		t.Fatalf("the paused server answered within the edit's result: the test did not make it late:\n%s", editResult.Content)
	}
	last := reqs[3].Messages[len(reqs[3].Messages)-1]
	if last.Role != string(llm.RoleUser) || !strings.Contains(last.Content, "diagnostics that arrived after your edit of greet.py") ||
		!strings.Contains(last.Content, `app.py:3:16: Argument missing for parameter "times"`) {
		t.Errorf("the model was not shown the late error before the turn ended; last message: %+v", last)
	}
	n := 0
	for _, msg := range s.History() {
		n += strings.Count(msg.Content, "app.py:3:16")
	}
	if n != 1 {
		t.Errorf("the late error is in the history %d times, want once", n)
	}
	if len(notes) == 0 {
		t.Error("the user was not told why the turn went on")
	}

	// The next tool result carries what came after the edit's result.
	if end := s.Run(ctx, "undo that", func(engine.Event) {}); end.Reason != engine.EndTurn {
		t.Fatalf("turn 2 ended %v (%s)", end.Reason, end.Err)
	}
	reqs = srv.Requests()
	if len(reqs) != 7 {
		t.Fatalf("%d model calls, want 7", len(reqs))
	}
	undo := reqs[5].Messages[len(reqs[5].Messages)-1]
	read := reqs[6].Messages[len(reqs[6].Messages)-1]
	if !strings.Contains(undo.Content, "incomplete") && !strings.Contains(undo.Content, "not checked") {
		t.Fatalf("the undo's check was not late: the test proves nothing:\n%s", undo.Content)
	}
	if !strings.HasPrefix(read.Content, "pyright: diagnostics that arrived after your edit of greet.py: no new errors") ||
		!strings.Contains(read.Content, "MESSAGE: str = greet(") {
		t.Errorf("read_file's result does not start with the undo's late check:\n%s", read.Content)
	}
}
