package confine

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/internal/testenv"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__sandbox" {
		// This test binary is the helper, as mm is.
		os.Exit(Main(os.Args[2:], os.Stderr))
	}
	os.Exit(m.Run())
}

// sandbox is a namespaces sandbox whose helper is this test binary.
func sandbox(t *testing.T, opts Options) *Sandbox {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts.Exe = exe
	if opts.Want == "" {
		opts.Want = WantNamespaces
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	s := New(context.Background(), opts)
	t.Cleanup(func() { s.Close() })
	if m, why := s.Mechanism(); m != Namespaces && opts.Want == WantNamespaces {
		testenv.Unavailable(t, "namespaces unavailable here: %s", why)
	}
	return s
}

// confined runs line in bash, confined by s in dir, as mm starts a
// command (Start, Wait), and takes out what it made that runs later.
func confined(t *testing.T, s *Sandbox, dir, line string, env ...string) (string, int, string) {
	t.Helper()
	r, refusal := s.Prepare(context.Background(), Command{Roots: []string{dir}, Dir: dir})
	if refusal != "" {
		t.Fatal(refusal)
	}
	out, err := os.CreateTemp("", "mm-output-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), s.opts.Environ...), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := r.Start(context.Background(), cmd); err != nil {
		t.Fatal(err)
	}
	code, err := r.Wait(cmd)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), code, r.Finish()
}

func TestNamespacesWorkspace(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	ws := t.TempDir()
	testenv.WriteFile(t, filepath.Join(ws, ".git", "config"), "[core]\n")
	testenv.WriteFile(t, filepath.Join(ws, ".envrc"), "export A=1\n")
	testenv.WriteFile(t, filepath.Join(ws, "main.go"), "package main\n")
	testenv.WriteFile(t, filepath.Join(home, ".bashrc"), "# mine\n")
	s := sandbox(t, Options{Environ: append(os.Environ(), "HOME="+home), Network: true})
	out, code, note := confined(t, s, ws, `
try() { if (eval "$1") 2>/dev/null; then echo "WROTE $2"; else echo "refused $2"; fi; }
try 'echo x > app' app
try 'sed -i s/main/app/ main.go' main.go
try 'echo x >> .git/config' .git/config
try 'echo x >> .envrc' .envrc
try 'echo x >> "$HOME/.bashrc"' .bashrc
try 'echo x > /etc/mm-test' /etc
try 'echo x > /tmp/t && cat /tmp/t >/dev/null' /tmp
try 'echo x > /proc/sys/kernel/core_pattern' core_pattern
try 'ls /dev/[sv]d* /dev/nvme* /dev/loop*' disks
try 'echo x > /dev/null && head -c1 /dev/urandom >/dev/null' /dev/null
echo evil > .vscode-later 2>/dev/null
mkdir -p .vscode && echo '{}' > .vscode/tasks.json
test -e /proc/`+strconv.Itoa(os.Getpid())+`/environ && echo "SEES $PPID"
grep -q CapEff:.0000000000000000 /proc/self/status && echo no-caps
`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"WROTE app\n", "WROTE main.go\n", "refused .git/config\n", "refused .envrc\n", "refused .bashrc\n", "refused /etc\n", "WROTE /tmp\n", "refused core_pattern\n", "refused disks\n", "WROTE /dev/null\n", "no-caps\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SEES") {
		t.Errorf("the command sees the test's process in /proc:\n%s", out)
	}
	if got := read(t, filepath.Join(ws, "main.go")); got != "package app\n" {
		t.Errorf("main.go = %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, ".vscode")); err == nil {
		t.Errorf(".vscode, made by the command, is still in the workspace")
	}
	if !strings.Contains(note, ".vscode") || !strings.Contains(note, "took out") {
		t.Errorf("note: %q", note)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Where mm is not root the helper maps the user alone and sets up with
// ambient capabilities, which the command does not keep. Run as root, the
// test starts the helper as nobody.
//
// Not parallel: the helper is written and then run, and a process forked
// meanwhile by a parallel test would hold it open for writing (ETXTBSY).
func TestNamespacesUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("runs the helper as another user; run as root to test that path (as a user, every test does)")
	}
	dir, err := os.MkdirTemp("", "mm-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	exe, _ := os.Executable()
	helper := filepath.Join(dir, "mm")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	testenv.WriteFile(t, filepath.Join(ws, ".git", "config"), "[core]\n")
	os.Chmod(ws, 0o777)
	os.Chmod(filepath.Join(ws, ".git", "config"), 0o666)
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o777)
	os.Chmod(tmp, 0o777)
	p := Plan{Writable: []string{ws}, ReadOnly: []string{filepath.Join(ws, ".git")}, Tmp: tmp}
	cmd := exec.Command(helper, "__sandbox", "--plan", p.encode(), "--", "bash", "-c",
		`id -u; echo x > new.txt && echo WROTE; echo x >> .git/config 2>/dev/null || echo refused; grep CapEff /proc/self/status`)
	cmd.Dir = ws
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, want := range []string{"65534\n", "WROTE\n", "refused\n", "CapEff:\t0000000000000000\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
}

// mm starts the command straight into its namespaces (Start, Wait): Wait
// returns when the command ends, a job it left in the background runs
// on — a server under nohup, as unconfined — and Close ends it.
func TestNamespacesBackgroundJob(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, f := range []string{"in", "out"} {
		if err := syscall.Mkfifo(filepath.Join(ws, f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := sandbox(t, Options{Network: true})
	r, refusal := s.Prepare(context.Background(), Command{Roots: []string{ws}, Dir: ws})
	if refusal != "" {
		t.Fatal(refusal)
	}
	cmd := exec.Command("bash", "-c", `(read x < in; echo "job $x" > out) > /dev/null 2>&1 & sleep 60 > /dev/null 2>&1 & exit 3`)
	cmd.Dir = ws
	cmd.Env = os.Environ()
	// The end of the command's context, once it has ended (the bash tool
	// cancels its timeout as it returns), leaves the jobs running.
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx, cmd); err != nil {
		t.Fatal(err)
	}
	if code, err := r.Wait(cmd); code != 3 || err != nil {
		t.Fatalf("Wait = %d, %v; want 3", code, err)
	}
	cancel()
	if err := os.WriteFile(filepath.Join(ws, "in"), []byte("alive\n"), 0); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(ws, "out")); got != "job alive\n" {
		t.Errorf("the background job answered %q", got)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the job left running (sleep 60)")
	}
}

// The end of the context a command was started with — the bash tool's
// timeout, the user's cancel — kills the command and everything it
// started, under either mechanism: the output's pipe, which a job in the
// background holds too, then ends.
func TestStartCancelKillsTheTree(t *testing.T) {
	t.Parallel()
	eachMechanism(t, func(t *testing.T, s *Sandbox, ws string) {
		r, refusal := s.Prepare(context.Background(), Command{Roots: []string{ws}, Dir: ws})
		if refusal != "" {
			t.Fatal(refusal)
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		cmd := exec.Command("bash", "-c", "sleep 60 & echo started; sleep 60")
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = ws, os.Environ(), pw, pw
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		err = r.Start(ctx, cmd)
		pw.Close()
		if err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(pr).ReadString('\n')
		if line != "started\n" {
			t.Fatalf("the command said %q (%v)", line, err)
		}
		cancel()
		if code, err := r.Wait(cmd); code != 128+int(syscall.SIGKILL) || err != nil {
			t.Errorf("Wait = %d, %v; want %d", code, err, 128+int(syscall.SIGKILL))
		}
		pr.SetReadDeadline(time.Now().Add(10 * time.Second))
		if rest, err := io.ReadAll(pr); err != nil {
			t.Errorf("the output did not end: the job in the background still holds it (%v, %q)", err, rest)
		}
	})
}

// The directory core.hooksPath names is read-only to a command, though
// its name is ordinary: git names it while the helper builds the view
// (Start), or before the editor's terminal runs Run.Argv, the other way
// to start a command — the same confinement, the same status.
func TestHooksDirectory(t *testing.T) {
	t.Parallel()
	testenv.NeedTool(t, "git")
	line := `echo x >> src/a.go && echo WROTE; (echo x >> githooks/pre-commit) 2>/dev/null || echo refused; exit 7`
	eachMechanism(t, func(t *testing.T, s *Sandbox, ws string) {
		if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		testenv.WriteFile(t, filepath.Join(ws, ".git", "config"), "[core]\n\thooksPath = githooks\n")
		testenv.WriteFile(t, filepath.Join(ws, "githooks", "pre-commit"), "go vet ./...\n")
		testenv.WriteFile(t, filepath.Join(ws, "src", "a.go"), "package a\n")
		if out, code, _ := confined(t, s, ws, line); out != "WROTE\nrefused\n" || code != 7 {
			t.Errorf("started by mm: got %q, exit %d", out, code)
		}
		r, refusal := s.Prepare(context.Background(), Command{Roots: []string{ws}, Dir: ws})
		if refusal != "" {
			t.Fatal(refusal)
		}
		argv := append(append([]string(nil), r.Argv()...), "bash", "-c", line)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = ws, append(os.Environ(), r.Env...)
		out, _ := cmd.CombinedOutput()
		r.Finish()
		if string(out) != "WROTE\nrefused\n" || cmd.ProcessState.ExitCode() != 7 {
			t.Errorf("started by another program: got %q, exit %d", out, cmd.ProcessState.ExitCode())
		}
		if got := read(t, filepath.Join(ws, "githooks", "pre-commit")); got != "go vet ./...\n" {
			t.Errorf("githooks/pre-commit is now %q", got)
		}
	})
}

// eachMechanism runs test, in parallel, under a sandbox of each
// mechanism, in a new workspace.
func eachMechanism(t *testing.T, test func(t *testing.T, s *Sandbox, ws string)) {
	for _, want := range []string{WantNamespaces, WantLandlock} {
		t.Run(want, func(t *testing.T) {
			t.Parallel()
			s := sandbox(t, Options{Want: want, Network: true})
			if m, why := s.Mechanism(); m == None {
				testenv.Unavailable(t, "%s unavailable here: %s", want, why)
			}
			test(t, s, t.TempDir())
		})
	}
}

// A spare helper that died while it waited (killed, out of memory) is
// replaced: the command runs.
func TestStartDeadSpare(t *testing.T) {
	t.Parallel()
	s := sandbox(t, Options{Network: true})
	h, err := s.take()
	if err != nil {
		t.Fatal(err)
	}
	h.proc.Kill()
	h.proc.Wait()
	s.mu.Lock()
	if s.spare != nil {
		s.spare.close()
	}
	s.spare = h
	s.mu.Unlock()
	if out, code, _ := confined(t, s, t.TempDir(), "echo ran"); out != "ran\n" || code != 0 {
		t.Errorf("got %q, exit %d", out, code)
	}
}

// The variables that name the session's sockets are not passed, whatever
// their name when their value is a socket's path; bashEnv.keep keeps one.
func TestSocketVars(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	environ := []string{"PATH=/usr/bin", "TMUX=/tmp/tmux-1/default,1,0", "MY_AGENT=" + sock, "BUS=unix:path=/run/x", "HOME=" + dir, "SSH_AUTH_SOCK=" + sock}
	for _, c := range []struct {
		keep []string
		want string
	}{
		{nil, "BUS MY_AGENT SSH_AUTH_SOCK TMUX"},
		{[]string{"ssh_*"}, "BUS MY_AGENT TMUX"},
	} {
		got := SocketVars(environ, c.keep)
		slices.Sort(got)
		if strings.Join(got, " ") != c.want {
			t.Errorf("keep %q: %q, want %q", c.keep, got, c.want)
		}
	}
}

// Under Landlock, network: off refuses TCP (ABI 4); the network on, the
// same command connects.
func TestLandlockNetworkOff(t *testing.T) {
	t.Parallel()
	if LandlockABI() < 4 {
		t.Skip("Landlock cannot restrict TCP before ABI 4 (Linux 6.7): New refuses commands there")
	}
	line := "(exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(testenv.Listener(t).Addr().(*net.TCPAddr).Port) + ") 2>/dev/null && echo connected || echo refused"
	for _, network := range []bool{true, false} {
		s := sandbox(t, Options{Want: WantLandlock, Network: network})
		if m, why := s.Mechanism(); m != Landlock {
			t.Fatalf("mechanism %s: %s", m, why)
		}
		want := map[bool]string{true: "connected\n", false: "refused\n"}[network]
		if out, _, _ := confined(t, s, t.TempDir(), line); out != want {
			t.Errorf("network %v: %q, want %q", network, out, want)
		}
	}
}
