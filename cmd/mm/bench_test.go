package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/app"
	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/line"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/engine/store"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/permit/confine"
)

// The overhead benchmarks — start-up to the initialize answer, resident
// memory, a session's start, engine time per model↔tool round trip,
// streaming throughput, a command's start; scripts/bench runs them and
// prints the tables of docs/performance.md.
// The model is the fake server at zero latency, so what is measured is
// mm (and the local HTTP it speaks), not a model.

// rpc drives a real `mm acp` with raw JSON-RPC lines, as an editor does.
type rpc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startRPC(tb testing.TB, dir string, env []string) *rpc {
	tb.Helper()
	cmd := exec.Command(mmBin(tb), "acp")
	cmd.Dir, cmd.Env = dir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	return &rpc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
}

// call sends a request and reads lines until its answer (notifications
// are skipped), returning the result.
func (r *rpc) call(tb testing.TB, method string, params any) json.RawMessage {
	tb.Helper()
	r.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id, "method": method, "params": params})
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		tb.Fatal(err)
	}
	for {
		line, err := r.out.ReadBytes('\n')
		if err != nil {
			tb.Fatalf("%s: %v", method, err)
		}
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method != "" || *m.ID != r.id {
			continue
		}
		if m.Error != nil {
			tb.Fatalf("%s: %s", method, m.Error)
		}
		return m.Result
	}
}

// open initializes and opens a session in dir, returning its id.
func (r *rpc) open(tb testing.TB, dir string) string {
	tb.Helper()
	r.call(tb, "initialize", initParams)
	var s struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(r.call(tb, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}}), &s)
	return s.SessionID
}

func (r *rpc) close() {
	r.in.Close()
	r.cmd.Wait()
}

func benchEnv(tb testing.TB, srv *llmtest.Server) []string {
	home := tb.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + home,
		"MM_LOG=" + filepath.Join(home, "mm.log"), "MM_PROVIDER=llamacpp", "MM_MODEL=fake-model"}
	env = append(env, testenv.GoHome(tb, home)...)
	if srv != nil {
		env = append(env, "MM_BASE_URL="+srv.URL())
	}
	return env
}

var initParams = map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}

// BenchmarkInitialize: from spawning `mm acp` to its initialize answer.
func BenchmarkInitialize(b *testing.B) {
	dir, env := b.TempDir(), benchEnv(b, nil)
	for b.Loop() {
		r := startRPC(b, dir, env)
		r.call(b, "initialize", initParams)
		b.StopTimer()
		r.close()
		b.StartTimer()
	}
}

// BenchmarkSessionRSS: the resident memory of `mm acp` after a 3-turn
// session, each turn a read_file round trip and an answer (language
// servers off: their own memory is theirs).
func BenchmarkSessionRSS(b *testing.B) {
	steps := []llmtest.Step{}
	for range 3 {
		steps = append(steps,
			llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "read_file", ArgsRaw: `{"path":"hello.txt"}`}}},
			llmtest.Step{Content: "The file says hello."})
	}
	srv := llmtest.NewServer(llmtest.Scenario{Steps: steps, Loop: true})
	defer srv.Close()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	env := append(benchEnv(b, srv), "PATH=/nonexistent") // no gopls, no pyright
	var rss, peak, anon, file float64
	for b.Loop() {
		r := startRPC(b, dir, env)
		sid := r.open(b, dir)
		for range 3 {
			r.call(b, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "What does hello.txt say?"}}})
		}
		pid := r.cmd.Process.Pid
		rss, peak = vmRSS(b, pid), vmStatus(b, pid, "VmHWM:")
		anon, file = vmStatus(b, pid, "RssAnon:"), vmStatus(b, pid, "RssFile:")
		r.close()
	}
	b.ReportMetric(rss, "RSS-MiB")
	b.ReportMetric(peak, "peak-RSS-MiB")
	// What the RSS is made of: mm's own memory, and the pages of its
	// executable (shared, clean, dropped first under pressure; a kernel
	// with large page-cache folios maps them 2 MiB at a time).
	b.ReportMetric(anon, "anon-RSS-MiB")
	b.ReportMetric(file, "file-RSS-MiB")
}

// BenchmarkSessionNew: session/new alone, in a fresh `mm acp` each time
// (the first session of a process is the one an editor waits for); the
// median and the slowest are reported besides the mean.
func BenchmarkSessionNew(b *testing.B) {
	srv := llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{{Content: "hi"}}})
	defer srv.Close()
	dir, env := b.TempDir(), benchEnv(b, srv)
	var ds []time.Duration
	for b.Loop() {
		b.StopTimer()
		r := startRPC(b, dir, env)
		r.call(b, "initialize", initParams)
		b.StartTimer()
		t0 := time.Now()
		r.call(b, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
		ds = append(ds, time.Since(t0))
		b.StopTimer()
		r.close()
		b.StartTimer()
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2])/1e6, "median-ms")
	b.ReportMetric(float64(ds[len(ds)-1])/1e6, "max-ms")
}

// BenchmarkLongSessionRSS: the resident memory of `mm acp` after the 1st
// and the 30th turn of a session whose every turn reads a 200 KB file
// (language servers off), and what it grew by per turn in between: all
// of it, and its anonymous part (the heap, the stacks — what mm holds,
// without the pages of its own binary that the kernel maps in as more of
// its code runs). A long session must not grow with what its tools
// returned long ago.
func BenchmarkLongSessionRSS(b *testing.B) {
	const turns = 30
	srv := llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "read_file", ArgsRaw: `{"path":"big.txt"}`}}},
		{Content: "Read it."},
	}})
	defer srv.Close()
	dir := b.TempDir()
	line := strings.Repeat("x", 99) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat(line, 2000)), 0o644); err != nil {
		b.Fatal(err)
	}
	env := append(benchEnv(b, srv), "PATH=/nonexistent")
	var first, last, anon1, anon30 float64
	for b.Loop() {
		r := startRPC(b, dir, env)
		sid := r.open(b, dir)
		for i := range turns {
			r.call(b, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "Read big.txt."}}})
			if i == 0 {
				first, anon1 = vmRSS(b, r.cmd.Process.Pid), vmStatus(b, r.cmd.Process.Pid, "RssAnon:")
			}
		}
		last, anon30 = vmRSS(b, r.cmd.Process.Pid), vmStatus(b, r.cmd.Process.Pid, "RssAnon:")
		r.close()
	}
	b.ReportMetric(first, "turn1-RSS-MiB")
	b.ReportMetric(last, "turn30-RSS-MiB")
	b.ReportMetric((last-first)*1024/(turns-1), "RSS-growth-KiB/turn")
	b.ReportMetric((anon30-anon1)*1024/(turns-1), "anon-growth-KiB/turn")
}

func vmRSS(tb testing.TB, pid int) float64 { return vmStatus(tb, pid, "VmRSS:") }

// vmStatus reads a memory line of /proc/PID/status (VmRSS, VmHWM) in MiB.
func vmStatus(tb testing.TB, pid int, key string) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skip("no /proc: ", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	tb.Fatal("no " + key)
	return 0
}

// benchSession is an engine session of the real app (its tools, its
// prompt) on the fake server, in process.
func benchSession(b *testing.B, srv *llmtest.Server, dir string) (*app.App, func() *engine.Session) {
	cfg := &config.Config{Provider: "llamacpp", BaseURL: srv.URL(), Model: "fake-model", ContextWindow: 32768, Source: "bench"}
	a := app.New(app.Options{Config: cfg, Env: config.ProcessEnv(nil), Log: slog.New(slog.DiscardHandler), LSPCold: true})
	b.Cleanup(a.Close)
	return a, func() *engine.Session {
		ws, _, err := a.Workspace(dir, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		return a.Session(store.NewID(), dir, ws)
	}
}

// BenchmarkRoundTrip: one turn with one model↔tool round trip (the model
// calls read_file, gets the file, answers), through the whole engine and
// the line renderer, against the fake server at zero latency. It also
// reports the fixed prompt (system prompt + tool declarations).
func BenchmarkRoundTrip(b *testing.B) {
	srv := llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{
		{ToolCalls: []llmtest.ToolCall{{Name: "read_file", ArgsRaw: `{"path":"hello.txt"}`}}},
		{Content: "The file says hello."},
	}})
	defer srv.Close()
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello\n"), 0o644)
	_, newSession := benchSession(b, srv, dir)
	chars, _ := newSession().FixedPrompt()
	ctx := context.Background()
	for b.Loop() {
		render := line.Renderer(io.Discard, io.Discard, false)
		if end := newSession().Run(ctx, "What does hello.txt say?", render); end.Reason != engine.EndTurn {
			b.Fatalf("turn ended %s: %s", end.Reason, end.Err)
		}
	}
	b.ReportMetric(float64(chars), "fixed-prompt-chars")
}

// BenchmarkStreaming: how many streamed chunks a second the engine takes
// from the server and renders (line renderer into io.Discard).
func BenchmarkStreaming(b *testing.B) {
	const words = 5000
	srv := llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{
		{Content: strings.Repeat("word ", words)},
	}})
	defer srv.Close()
	_, newSession := benchSession(b, srv, b.TempDir())
	ctx := context.Background()
	start := time.Now()
	n := 0
	for b.Loop() {
		render := line.Renderer(io.Discard, io.Discard, false)
		if end := newSession().Run(ctx, "talk", render); end.Reason != engine.EndTurn {
			b.Fatalf("turn ended %s: %s", end.Reason, end.Err)
		}
		n++
	}
	b.ReportMetric(float64(n*words)/time.Since(start).Seconds(), "chunks/s")
}

// BenchmarkCommandStart is what confining a command costs when it
// starts: /bin/true run as the bash tool runs a command (a session of its
// own, in a small workspace, started and waited for as the tool does),
// unconfined, under namespaces and under Landlock — Prepare's looks at
// the workspace and Finish included. The three run in turn at each
// iteration, so that a busy machine slows them alike; the medians are
// reported. Each start follows a pause, as a model's commands come a
// turn apart: the sandbox starts its next helper once a command has
// ended, and a start that followed at once would compete with that one
// for the CPU, or wait for it.
func BenchmarkCommandStart(b *testing.B) {
	bin := mmBin(b)
	ws := b.TempDir()
	for _, f := range []string{"go.mod", "main.go", "README.md", "src/a.go", "src/b.go", ".git/config", ".git/HEAD", ".vscode/settings.json"} {
		testenv.WriteFile(b, filepath.Join(ws, f), "x\n")
	}
	ctx := context.Background()
	names := []string{"unconfined", "namespaces", "landlock"}
	boxes := make([]*confine.Sandbox, len(names))
	for i, want := range []string{"", confine.WantNamespaces, confine.WantLandlock} {
		if want == "" {
			continue
		}
		boxes[i] = confine.New(ctx, confine.Options{Want: want, Network: true, Exe: bin, Environ: os.Environ()})
		defer boxes[i].Close()
		if m, why := boxes[i].Mechanism(); m == confine.None {
			b.Skipf("%s: %s", names[i], why)
		}
	}
	start := func(s *confine.Sandbox) time.Duration {
		began := time.Now()
		cmd := exec.Command("/bin/true")
		cmd.Dir, cmd.Env = ws, os.Environ()
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		var err error
		if s == nil {
			err = cmd.Run()
		} else {
			run, _ := s.Prepare(ctx, confine.Command{Roots: []string{ws}, Dir: ws})
			if err = run.Start(ctx, cmd); err == nil {
				var code int
				if code, err = run.Wait(cmd); code != 0 {
					err = fmt.Errorf("exit %d", code)
				}
			}
			run.Finish()
		}
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(began)
	}
	for _, s := range boxes {
		start(s) // the caches are looked up once per sandbox
	}
	took := make([][]time.Duration, len(names))
	for b.Loop() {
		for i, s := range boxes {
			b.StopTimer()
			time.Sleep(30 * time.Millisecond)
			b.StartTimer()
			took[i] = append(took[i], start(s))
		}
	}
	for i, name := range names {
		slices.Sort(took[i])
		b.ReportMetric(float64(took[i][len(took[i])/2])/1e6, name+"-median-ms")
	}
}
