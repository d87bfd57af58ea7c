package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/bash"
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
		pauseServers(s.pause)
	}
	return s.Disk.WriteFile(ctx, p, b, m)
}

// pausing is held by a test whose servers pauseServers stops.
var pausing sync.Mutex

// pauseServers stops the language servers (SIGSTOP to their process
// groups) for d.
func pauseServers(d time.Duration) {
	groups := childGroups()
	for _, g := range groups {
		_ = syscall.Kill(-g, syscall.SIGSTOP)
	}
	time.AfterFunc(d, func() {
		for _, g := range groups {
			_ = syscall.Kill(-g, syscall.SIGCONT)
		}
	})
}

// slowAfterCommand is a tool whose every run pauses the language servers
// for a while once it is over: the check of what it changed ends after
// its result, as on a machine too busy to answer in time.
type slowAfterCommand struct {
	tools.Tool
	pause time.Duration
}

func (s slowAfterCommand) Run(ctx context.Context, env tools.Env, args json.RawMessage) (tools.Result, error) {
	res, err := s.Tool.Run(ctx, env, args)
	pauseServers(s.pause)
	return res, err
}

// childGroups lists the process groups of this process's children that
// are language servers (each started in its own group): not the commands
// that other tests' bash tools run beside them.
func childGroups() []int {
	self := strconv.Itoa(os.Getpid())
	var out []int
	for pid, p := range testenv.Processes() {
		if p.PPID != self {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if !bytes.Contains(cmdline, []byte("pyright")) && !bytes.Contains(cmdline, []byte("gopls")) {
			continue
		}
		if g, err := strconv.Atoi(p.PGRP); err == nil && g != os.Getpid() {
			out = append(out, g)
		}
	}
	return out
}

// TestLateDiagnosticsBeforeTurnEnds: the model breaks app.py by changing
// greet.py, pyright answers only after the edit's result, and the model
// ends its turn: the turn waits for the answer and gives it to the
// model, once, which then reacts — instead of ending on a broken edit.
func TestLateDiagnosticsBeforeTurnEnds(t *testing.T) {
	t.Parallel()
	dir, m := warmPyright(t)
	late := lspbridge.NewLate()
	ws := diskEnv(t, dir, slowServer{file: filepath.Join(dir, "greet.py"), pause: 3 * time.Second})
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
	editResult := reqs[2].Last()
	if strings.Contains(editResult.Content, "app.py:3:") {
		t.Fatalf("the paused server answered within the edit's result: the test did not make it late:\n%s", editResult.Content)
	}
	last := reqs[3].Last()
	if last.Role != string(llm.RoleUser) || !strings.Contains(last.Content, "diagnostics that arrived after your edit of greet.py") ||
		!strings.Contains(last.Content, `app.py:3:16: Argument missing for parameter "times"`) {
		t.Errorf("the model was not shown the late error before the turn ended; last message: %+v", last)
	}
	lateErrorOnce(t, s)
	if len(notes) == 0 {
		t.Error("the user was not told why the turn went on")
	}

	// The next tool result carries what came after the edit's result.
	reqs = turnOf(t, ctx, s, srv, "undo that", 7)
	undo, read := reqs[5].Last(), reqs[6].Last()
	if !strings.Contains(undo.Content, "incomplete") && !strings.Contains(undo.Content, "not checked") {
		t.Fatalf("the undo's check was not late: the test proves nothing:\n%s", undo.Content)
	}
	if !strings.HasPrefix(read.Content, "pyright: diagnostics that arrived after your edit of greet.py: no new errors") ||
		!strings.Contains(read.Content, "MESSAGE: str = greet(") {
		t.Errorf("read_file's result does not start with the undo's late check:\n%s", read.Content)
	}
}

// warmPyright makes a workspace where app.py calls greet.greet, and a
// Manager whose pyright has checked app.py once: a session's warm
// server. Its checks wait 1 s at most, so that a paused server misses
// them.
func warmPyright(t *testing.T) (string, *lspbridge.Manager) {
	t.Helper()
	// The tests pause every language server of this process: one at a
	// time, so that none pauses another's. The lock comes first: a test
	// waiting for it must not hold a language server's slot meanwhile.
	pausing.Lock()
	t.Cleanup(pausing.Unlock)
	testenv.NeedLanguageServer(t, "pyright-langserver")
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
	return dir, m
}

// TestLateDiagnosticsOfCommand: a bash command (sed) changes greet.py
// behind the editor's back and breaks app.py; pyright answers after the
// command's result. What it says reaches the model the way an edit's
// late answer does: once, before the turn ends. In the next turn the
// model breaks greet.py again by a command and, before the late answer,
// fixes app.py: the fixed state wins, the broken one is never shown.
func TestLateDiagnosticsOfCommand(t *testing.T) {
	t.Parallel()
	dir, m := warmPyright(t)
	// mm has greet.py open (an earlier edit or query): a command's
	// change to it is compared with the text mm holds.
	if _, note, err := m.Diagnostics(context.Background(), filepath.Join(dir, "greet.py")); err != nil || note != "" {
		t.Fatalf("greet.py not checked: %v %s", err, note)
	}
	late := lspbridge.NewLate()
	ws := diskEnv(t, dir, nil)
	sh := lsptool.CommandHook{Tool: slowAfterCommand{Tool: bash.New(bash.Options{}), pause: 3 * time.Second}, Manager: m, Late: late}
	reg := tools.NewRegistry(append(files.New(files.Options{MaxTokens: 4096, Diagnostics: lsptool.EditHook{Manager: m, Late: late}}), sh)...)
	breakGreet := call("bash", `{"command":"sed -i 's/def greet(name: str) -> str:/def greet(name: str, times: int) -> str:/' greet.py"}`)
	s, srv := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{breakGreet}},
		llmtest.Step{Content: "Done: greet takes times."},
		llmtest.Step{Content: "app.py calls greet without times; I will fix it next."},
		// Turn 2: greet.py back, then broken again by a command, and
		// app.py fixed before the command's late answer.
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("read_file", `{"path":"app.py"}`)}},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("bash", `{"command":"git checkout -q greet.py 2>/dev/null || sed -i 's/, times: int//' greet.py"}`)}},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{breakGreet}},
		llmtest.Step{ToolCalls: []llmtest.ToolCall{call("edit_file", `{"path":"app.py","edits":[{"old":"greet(\"bob\")","new":"greet(\"bob\", 2)"}]}`)}},
		llmtest.Step{Content: "greet takes times, and app.py passes it."},
	), func(o *engine.Options) {
		o.Tools, o.Env, o.Late = reg, ws, late
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	reqs := turnOf(t, ctx, s, srv, "add a times parameter to greet, with sed", 3) // the last after the late answer
	cmdResult := reqs[1].Last()
	if strings.Contains(cmdResult.Content, "app.py:3:") || !strings.Contains(cmdResult.Content, "incomplete") && !strings.Contains(cmdResult.Content, "not checked") {
		t.Fatalf("the paused server answered within the command's result: the test proves nothing:\n%s", cmdResult.Content)
	}
	last := reqs[2].Last()
	if !strings.Contains(last.Content, "pyright: diagnostics that arrived after your command of greet.py") ||
		!strings.Contains(last.Content, `app.py:3:16: Argument missing for parameter "times"`) {
		t.Errorf("the model was not shown the command's late error before the turn ended; last message: %+v", last)
	}
	lateErrorOnce(t, s)

	before := len(s.History())
	reqs = turnOf(t, ctx, s, srv, "do it again, and fix app.py", 8)
	again := reqs[6].Last()
	if strings.Contains(again.Content, "app.py:3:") || !strings.Contains(again.Content, "incomplete") && !strings.Contains(again.Content, "not checked") {
		t.Fatalf("the second command's check was not late: the test proves nothing:\n%s", again.Content)
	}
	for _, msg := range s.History()[before:] {
		if strings.Contains(msg.Content, "app.py:3:16") {
			t.Errorf("the error app.py's fix removed was shown after the fix:\n%s", msg.Content)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "app.py")); !strings.Contains(string(data), `greet("bob", 2)`) {
		t.Fatalf("app.py not fixed: %s", data)
	}
}

// lateErrorOnce checks that app.py's late error is in the session's
// history exactly once: given to the model, and not again.
func lateErrorOnce(t *testing.T, s *engine.Session) {
	t.Helper()
	n := 0
	for _, msg := range s.History() {
		n += strings.Count(msg.Content, "app.py:3:16")
	}
	if n != 1 {
		t.Errorf("the late error is in the history %d times, want once", n)
	}
}

// turnOf runs prompt as a turn of s, which must end normally, and
// returns the model's requests so far: want of them.
func turnOf(t *testing.T, ctx context.Context, s *engine.Session, srv *llmtest.Server, prompt string, want int) []llmtest.Recorded {
	t.Helper()
	if end := s.Run(ctx, prompt, func(engine.Event) {}); end.Reason != engine.EndTurn {
		t.Fatalf("turn %q ended %v (%s)", prompt, end.Reason, end.Err)
	}
	reqs := srv.Requests()
	if len(reqs) != want {
		t.Fatalf("%d model calls, want %d", len(reqs), want)
	}
	return reqs
}
