//go:build unix

package bash

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/tools"
)

// fakeEnv is the editor side of a session, reduced to what bash uses: a
// working directory and a permission prompt that answers as told.
type fakeEnv struct {
	tools.Env // methods bash never calls stay nil
	cwd       string
	decision  tools.Decision

	mu    sync.Mutex
	asked []tools.Approval
}

func newEnv(t *testing.T) *fakeEnv {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &fakeEnv{cwd: dir, decision: tools.Decision{Allowed: true}}
}

func (e *fakeEnv) Cwd() string     { return e.cwd }
func (e *fakeEnv) Roots() []string { return []string{e.cwd} }
func (e *fakeEnv) Progress(string) {}

func (e *fakeEnv) Approve(_ context.Context, a tools.Approval) (tools.Decision, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.asked = append(e.asked, a)
	return e.decision, nil
}

func (e *fakeEnv) approvals() []tools.Approval {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]tools.Approval(nil), e.asked...)
}

func args(cmd string) json.RawMessage {
	b, _ := json.Marshal(Params{Command: cmd})
	return b
}

// run calls the tool and fails the test on a Go error.
func run(t *testing.T, tool tools.Tool, env tools.Env, cmd string) tools.Result {
	t.Helper()
	r, err := tool.Run(context.Background(), env, args(cmd))
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	return r
}

var statusLine = regexp.MustCompile(`\n\[exit code: (-?\d+) · \d+\.\ds\]$`)

func TestExitCodeAndTiming(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	cases := []struct {
		cmd     string
		want    string
		code    string
		isError bool
	}{
		{"echo hello", "hello\n", "0", false},
		{"echo oops >&2; exit 3", "oops\n", "3", true},
		{"true", "(no output)\n", "0", false},
		{"kill -9 $$", "(no output)\n", "137", true},
	}
	for _, c := range cases {
		r := run(t, tool, env, c.cmd)
		m := statusLine.FindStringSubmatch(r.Text)
		if m == nil || m[1] != c.code {
			t.Errorf("%q: want exit code %s and a timing line, got %q", c.cmd, c.code, r.Text)
			continue
		}
		if !strings.HasPrefix(r.Text, c.want) || r.IsError != c.isError {
			t.Errorf("%q: got %q (IsError %v), want %q… (IsError %v)", c.cmd, r.Text, r.IsError, c.want, c.isError)
		}
	}
}

func TestEmptyCommand(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	r := run(t, tool, env, "  ")
	if !r.IsError || !strings.Contains(r.Text, `"command" is empty`) || len(env.approvals()) != 0 {
		t.Errorf("got %+v", r)
	}
}

func TestTruncationKeepsHeadAndTail(t *testing.T) {
	tool, env := New(Options{MaxOutput: 1000}), newEnv(t)
	r := run(t, tool, env, "seq 1 10000")
	text := r.Text
	if !strings.HasPrefix(text, "1\n2\n3\n") {
		t.Errorf("head lost: %.60q", text)
	}
	if !strings.Contains(text, "\n9999\n10000\n[exit code: 0 ") {
		t.Errorf("tail lost: …%q", text[len(text)-80:])
	}
	marker := regexp.MustCompile(`\[… (\d+) lines \((\d+) chars\) of 10000 cut here\. To see them, run the command again with > out\.txt 2>&1, then grep out\.txt`)
	m := marker.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no marker in %q", text)
	}
	if n, _ := strconv.Atoi(m[1]); n < 9500 || n > 9900 {
		t.Errorf("marker says %s lines cut", m[1])
	}
	body := statusLine.ReplaceAllString(marker.ReplaceAllString(text, ""), "")
	if len(body) > 1200 {
		t.Errorf("kept %d chars, want about 1000", len(body))
	}
	// Cuts fall on line breaks: no number is split.
	for _, l := range strings.Split(strings.TrimSpace(strings.SplitN(text, "[…", 2)[0]), "\n") {
		if _, err := strconv.Atoi(l); err != nil {
			t.Errorf("head has a broken line %q", l)
		}
	}
}

func TestANSIAndCarriageReturnsCleaned(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	cmd := `printf '\033[1;31mred\033[0m \033]8;;http://x\033\\link\033]8;;\033\\ \033(Bok\n'; printf 'dl 10%%\rdl 50%%\rdl 100%%\r\n'; printf 'b\bbold\n'`
	r := run(t, tool, env, cmd)
	want := "red link ok\ndl 100%\nbold\n[exit code: 0"
	if !strings.HasPrefix(r.Text, want) {
		t.Errorf("got %q, want %q…", r.Text, want)
	}
}

func TestPipefailKeepsExitCodeOfCommand(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	r := run(t, tool, env, "(echo building; echo 'error: boom'; exit 2) | tail -1")
	if m := statusLine.FindStringSubmatch(r.Text); m == nil || m[1] != "2" || !r.IsError || !strings.HasPrefix(r.Text, "error: boom\n") {
		t.Errorf("got %q", r.Text)
	}
}

// With pipefail, a producer cut off by `head` dies of SIGPIPE (141): that
// is how head works, not a failure the model should chase.
func TestSigpipeIntoHeadIsNotAFailure(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	r := run(t, tool, env, "yes | head -2")
	if r.IsError || !strings.HasPrefix(r.Text, "y\ny\n[exit code: 141 ") || !strings.Contains(r.Text, "SIGPIPE") {
		t.Errorf("got %q (IsError %v)", r.Text, r.IsError)
	}
}

func TestCwdAndCdDoesNotCarryOver(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	if err := os.Mkdir(filepath.Join(env.cwd, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := run(t, tool, env, "cd sub && pwd"); !strings.HasPrefix(r.Text, filepath.Join(env.cwd, "sub")+"\n") {
		t.Errorf("cd sub && pwd: %q", r.Text)
	}
	if r := run(t, tool, env, "pwd"); !strings.HasPrefix(r.Text, env.cwd+"\n") {
		t.Errorf("pwd after cd: %q, want %s", r.Text, env.cwd)
	}
}

func TestNoStdin(t *testing.T) {
	tool, env := New(Options{Timeout: 20 * time.Second}), newEnv(t)
	start := time.Now()
	r := run(t, tool, env, `read x; echo "read=$? x=[$x]"`)
	if !strings.HasPrefix(r.Text, "read=1 x=[]\n") || time.Since(start) > hung {
		t.Errorf("got %q after %v", r.Text, time.Since(start))
	}
}

// watch starts a call whose command writes the pid of a child to the FIFO
// on its fd 3 and keeps fd 3 open in the shell and the child. The FIFO
// reaches end of file only when every process holding it is dead, so the
// test sees the group die without polling. It returns the child's pid, the
// FIFO, and the channel the call's outcome arrives on.
func watch(t *testing.T, ctx context.Context, tool tools.Tool, env *fakeEnv, script string) (int, *os.File, <-chan outcome) {
	t.Helper()
	fifo := filepath.Join(env.cwd, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := tool.Run(ctx, env, args(`exec 3>fifo; `+script))
		done <- outcome{r, err}
	}()
	opened := make(chan *os.File, 1)
	go func() {
		f, _ := os.Open(fifo) // blocks until the shell opens its end
		opened <- f
	}()
	var f *os.File
	select {
	case f = <-opened:
	case o := <-done:
		t.Fatalf("call ended before opening the FIFO: %+v", o)
	case <-time.After(10 * time.Second):
		t.Fatal("the shell never opened the FIFO")
	}
	if f == nil {
		t.Fatal("cannot open the FIFO")
	}
	t.Cleanup(func() { f.Close() })
	f.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child pid %q: %v", line, err)
	}
	return pid, f, done
}

type outcome struct {
	r   tools.Result
	err error
}

// waitAllClosed waits until no process holds the FIFO open.
// hung is the bound past which a test calls a command hung: the commands
// under test sleep 30 s when they are not killed, so it tells a kill from
// no kill without asserting speed on a loaded, race-built machine.
const hung = 15 * time.Second

func waitAllClosed(t *testing.T, f *os.File, within time.Duration) {
	t.Helper()
	f.SetReadDeadline(time.Now().Add(within))
	if _, err := io.Copy(io.Discard, f); err != nil {
		t.Fatalf("the process group was still alive after %v: %v", within, err)
	}
}

// notRunning checks a process is gone or dying (a zombie, or past closing
// its files); a live sleep would be in state S.
func notRunning(t *testing.T, pid int) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		switch s[i+2] {
		case 'S', 'T', 't':
			t.Errorf("child %d still alive: %s", pid, s)
		}
	}
}

func TestTimeoutKillsGroupAndKeepsOutput(t *testing.T) {
	tool, env := New(Options{Timeout: 1500 * time.Millisecond}), newEnv(t)
	pid, f, done := watch(t, context.Background(), tool, env, `echo partial; sleep 30 & echo $! >&3; wait`)
	o := <-done
	if o.err != nil {
		t.Fatalf("timeout is a result, not an error: %v", o.err)
	}
	waitAllClosed(t, f, hung)
	notRunning(t, pid)
	testenv.WantIn(t, "the result", o.r.Text, "partial\n", "timed out after 1.5s", "nohup cmd > cmd.log 2>&1 &")
	if !o.r.IsError {
		t.Error("a timeout is a failed call")
	}
}

func TestCancelKillsGroup(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pid, f, done := watch(t, ctx, tool, env, `sleep 30 & echo $! >&3; sleep 30`)
	cancel()
	waitAllClosed(t, f, hung)
	notRunning(t, pid)
	if o := <-done; !errors.Is(o.err, context.Canceled) {
		t.Errorf("want context.Canceled, got %+v", o)
	}
}

func TestParamTimeoutCapped(t *testing.T) {
	r := &runner{opts: Options{Timeout: DefaultTimeout}}
	for secs, want := range map[int]time.Duration{0: DefaultTimeout, -3: DefaultTimeout, 5: 5 * time.Second, 100000: maxTimeout} {
		if got := r.timeout(secs); got != want {
			t.Errorf("timeout(%d) = %v, want %v", secs, got, want)
		}
	}
}

func TestBareBackgroundRefused(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	r := run(t, tool, env, "touch ran && sleep 100 &")
	if !r.IsError || !strings.Contains(r.Text, "touch ran && nohup sleep 100 > sleep.log 2>&1 &") {
		t.Errorf("got %q", r.Text)
	}
	if _, err := os.Stat(filepath.Join(env.cwd, "ran")); err == nil {
		t.Error("the refused command ran")
	}
	if len(env.approvals()) != 0 {
		t.Error("a refused command must not be offered for approval")
	}
}

// A background job must not hold the call open: the output is a file, so
// the shell's exit ends the call. A job started on purpose with its output
// redirected outlives the call; one hidden mid-line does not block either.
func TestBackgroundJobDoesNotBlock(t *testing.T) {
	tool, env := New(Options{Timeout: 20 * time.Second}), newEnv(t)
	for _, cmd := range []string{
		"nohup sleep 30 > bg.log 2>&1 & echo $!",
		"sleep 30 & echo $!",
	} {
		start := time.Now()
		r := run(t, tool, env, cmd)
		if elapsed := time.Since(start); elapsed > hung || r.IsError {
			t.Fatalf("%q: took %v: %q", cmd, elapsed, r.Text)
		}
		pid, err := strconv.Atoi(strings.SplitN(r.Text, "\n", 2)[0])
		if err != nil {
			t.Fatalf("%q: %q", cmd, r.Text)
		}
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
		if err := syscall.Kill(pid, 0); err != nil {
			t.Errorf("%q: the background job did not survive the call: %v", cmd, err)
		}
	}
}

func TestCatastrophicRefusedWithoutAsking(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	for _, cmd := range []string{"rm -rf /", ":(){ :|:& };:", "sudo mkfs.ext4 /dev/sda1", "shutdown -h now"} {
		r := run(t, tool, env, cmd)
		if !r.IsError || !strings.HasPrefix(r.Text, "[refused: ") {
			t.Errorf("%q: got %q", cmd, r.Text)
		}
	}
	if n := len(env.approvals()); n != 0 {
		t.Errorf("%d refused commands were offered for approval", n)
	}
}

func TestDeclinedTellsTheModelAndRunsNothing(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	env.decision = tools.Decision{Allowed: false, Reason: "the user declined"}
	r := run(t, tool, env, "touch marker")
	if !r.IsError || !strings.Contains(r.Text, "the user declined") || !strings.Contains(r.Text, "did not run") {
		t.Errorf("got %q", r.Text)
	}
	if _, err := os.Stat(filepath.Join(env.cwd, "marker")); err == nil {
		t.Error("a declined command ran")
	}
}

func TestApprovalRequest(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	run(t, tool, env, "git status --short 2>&1 | head -5")
	a := env.approvals()
	if len(a) != 1 {
		t.Fatalf("asked %d times", len(a))
	}
	got := a[0]
	keys := []string{}
	for _, p := range got.Parts {
		keys = append(keys, p.Key)
	}
	if got.Tool != "bash" || got.Kind != tools.KindExecute || strings.Join(keys, ",") != "git status --short,head -5" ||
		got.Title != "Run `git status --short 2>&1 | head -5`" || got.Subject != "git status --short 2>&1 | head -5" ||
		!strings.Contains(got.Detail, "git status --short 2>&1 | head -5") {
		t.Errorf("got %+v", got)
	}
	if p, ok := got.Input.(Params); !ok || p.Command != "git status --short 2>&1 | head -5" {
		t.Errorf("Input = %#v", got.Input)
	}
}

// A command printing far more than endBytes costs memory for the two ends
// only: reading it all would allocate its full size several times over.
func TestHugeOutputBoundedMemory(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	const size = 16 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := run(t, tool, env, fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x; echo; echo end", size))
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %.1f MiB for a %d MiB output", float64(alloc)/(1<<20), size>>20)
	if alloc > 8<<20 {
		t.Errorf("allocated %d MiB for a %d MiB output", alloc>>20, size>>20)
	}
	if len(r.Text) > DefaultMaxOutput+600 {
		t.Errorf("result is %d chars", len(r.Text))
	}
	if !strings.HasPrefix(r.Text, "xxxxxxxx") || !strings.Contains(r.Text, "[… about 16.0 MiB cut here") || !strings.Contains(r.Text, "xxx\nend\n[the command printed 16.0 MiB; mm kept only its first and last 1.0 MiB]\n[exit code: 0 ") {
		t.Errorf("got %.200q … %q", r.Text, r.Text[len(r.Text)-200:])
	}
}

func TestDescribe(t *testing.T) {
	tool, env := New(Options{}), newEnv(t)
	long := "echo " + strings.Repeat("x", 200)
	cases := map[string]string{
		`{"command":"go test ./..."}`: "Run `go test ./...`",
		`{"command":"cd a\nmake\n"}`:  "Run `cd a` and 1 more command, 2 lines",
		`{"command":` + q(long) + `}`: "Run `" + long[:59] + "…` (205 characters in all)",
		`{"cmd":"ls"}`:                "bash",
	}
	for in, want := range cases {
		if c := tool.Describe(env, json.RawMessage(in)); c.Title != want || len(c.Locations) != 0 {
			t.Errorf("Describe(%s) = %+v, want %q", in, c, want)
		}
	}
}

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestDescriptionAndSchema(t *testing.T) {
	tool := New(Options{})
	d := tool.Description()
	if len(d) > 600 {
		t.Errorf("description is %d chars, budget 600", len(d))
	}
	testenv.WantIn(t, "description", d, "NEW shell", "cd dir && cmd", "no stdin", "nohup cmd > cmd.log 2>&1 &", "killed after 30s")
	if got := New(Options{Timeout: 2 * time.Minute}).Description(); !strings.Contains(got, "killed after 120s") {
		t.Errorf("description does not follow Options.Timeout: %s", got)
	}
	want := `{"type":"object","properties":{"command":{"type":"string","description":"the bash command line"},"timeout":{"type":"integer","description":"seconds before it is killed (max 600)"}},"required":["command"]}`
	if got := string(tool.Schema()); got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	if tool.Name() != "bash" || tool.Kind() != tools.KindExecute {
		t.Errorf("name %q kind %q", tool.Name(), tool.Kind())
	}
}

// What a command prints is kept in memory, its two ends only, and never
// in a file, where 30 s of `yes` would fill a tmpfs /tmp. The result says
// what was cut and why.
func TestOutputCappedAndNeverOnDisk(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tool, env := New(Options{}), newEnv(t)
	r := run(t, tool, env, `ls -A "$TMPDIR"; echo listed`)
	if !strings.HasPrefix(r.Text, "listed\n") || strings.Contains(r.Text, "mm-bash") {
		t.Fatalf("the command's output went to a file in $TMPDIR: %q", r.Text)
	}
	r = run(t, tool, env, `yes | head -c 40000000; echo; echo end`)
	testenv.WantIn(t, "result", r.Text, "y\ny\n", "[… about 38.1 MiB cut here: the command printed 38.1 MiB and mm keeps only its first and last 1.0 MiB.", "y\n\nend\n[the command printed 38.1 MiB; mm kept only its first and last 1.0 MiB]\n[exit code: 0 ")
}
