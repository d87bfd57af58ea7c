package lspbridge

import (
	"bytes"
	"context"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestMain puts $(go env GOPATH)/bin on PATH, where `go install` puts
// gopls, so the integration tests find it without a shell profile.
func TestMain(m *testing.M) {
	if _, err := exec.LookPath("gopls"); err != nil {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			for _, p := range filepath.SplitList(strings.TrimSpace(string(out))) {
				os.Setenv("PATH", os.Getenv("PATH")+string(os.PathListSeparator)+filepath.Join(p, "bin"))
			}
		}
	}
	os.Exit(m.Run())
}

// fixture copies testdata/<name> into a fresh directory.
func fixture(t testing.TB, name string) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("testdata", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return canonical(dst)
}

// served copies the named fixture and starts a manager over it, once the
// language server the fixture needs is there: gopls for go/…, pyright
// for py/….
func served(t testing.TB, name string) (dir string, m *Manager) {
	t.Helper()
	bin := "gopls"
	if strings.HasPrefix(name, "py/") {
		bin = "pyright-langserver"
	}
	testenv.NeedLanguageServer(t, bin)
	dir = fixture(t, name)
	return dir, newTestManager(t, dir)
}

// newTestManager returns a Manager for dir whose servers are closed, and
// checked gone, when the test ends.
func newTestManager(t testing.TB, dir string) *Manager {
	t.Helper()
	return newTestManagerWith(t, dir, func(*Config) {})
}

// newTestManagerWith is newTestManager with the default configuration
// changed by with.
func newTestManagerWith(t testing.TB, dir string, with func(*Config)) *Manager {
	t.Helper()
	cfg := DefaultConfig()
	with(&cfg)
	cfg.BaseDir = dir
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// A cold gopls cache (the first run on a machine) type-checks the
	// standard library first: seconds. The bound itself is tested apart,
	// and a test that sets its own keeps it.
	if cfg.Wait == 0 {
		cfg.Wait = 30 * time.Second
		if w := os.Getenv("MM_LSP_WAIT"); w != "" {
			cfg.Wait, _ = time.ParseDuration(w)
		}
	}
	m := New(cfg)
	t.Cleanup(func() {
		groups := serverGroups(m)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Logf("Close took %v", d)
		}
		if kids := childrenIn(groups); len(kids) > 0 {
			t.Errorf("processes left after Close: %v", kids)
		}
		if left := inGroups(groups); len(left) > 0 {
			t.Errorf("processes of the servers' groups left after Close: %v", left)
		}
	})
	return m
}

// edit replaces old by new in path the way an edit tool does: Before,
// write, After. It returns what After says.
func edit(t testing.TB, m *Manager, path, old, new string) string {
	t.Helper()
	ctx := context.Background()
	snap := m.Before(ctx, path)
	snap.Wait(ctx) // as the edit tools do: the server sees the old text first
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	data = bytes.Replace(data, []byte(old), []byte(new), 1)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return m.After(ctx, snap, data)
}

// children lists the child processes of this test process, zombies
// included, read from /proc.
func children(t testing.TB) []string {
	t.Helper()
	self := strconv.Itoa(os.Getpid())
	var out []string
	for pid, p := range testenv.Processes() {
		if p.PPID == self {
			out = append(out, pid+" "+p.Comm+" "+p.State)
		}
	}
	return out
}

// childrenIn lists the child processes of this test process in groups,
// zombies included: a server Close did not reap. Other tests' servers,
// running beside, are not in them.
func childrenIn(groups map[string]bool) []string {
	self := strconv.Itoa(os.Getpid())
	var out []string
	for pid, p := range testenv.Processes() {
		if p.PPID == self && groups[p.PGRP] {
			out = append(out, pid+" "+p.Comm+" "+p.State)
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// serverGroups lists the process groups of the running servers.
func serverGroups(m *Manager) map[string]bool {
	out := map[string]bool{}
	for _, s := range m.running() {
		s.mu.Lock()
		if s.cur != nil {
			out[strconv.Itoa(s.cur.cmd.Process.Pid)] = true
		}
		s.mu.Unlock()
	}
	return out
}

// inGroups lists the processes of groups that Close left alive: those
// neither dead (a zombie) nor dying (SIGKILL pending). A server's child
// (gopls's `go list`, pyright's python3) is reparented to init when the
// server is reaped, and init reaps it when the machine lets it run: on a
// busy machine it stays a zombie for a while, which is no leak of mm's,
// since it has exited. A zombie whose parent is this process is one,
// and children lists it.
func inGroups(groups map[string]bool) []string {
	var out []string
	for pid, p := range testenv.Processes() {
		if groups[p.PGRP] && p.State != "Z" && !killPending(pid) {
			out = append(out, pid+" "+p.Comm+" "+p.State)
		}
	}
	return out
}

// killPending reports whether SIGKILL was sent to pid and it has not
// died of it yet (it has not been scheduled since): the signal's bit in
// its pending sets in /proc/PID/status. A process gone since counts too.
func killPending(pid string) bool {
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return true
	}
	for _, line := range strings.Split(string(status), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != "SigPnd" && k != "ShdPnd" {
			continue
		}
		if mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && mask&(1<<(int(syscall.SIGKILL)-1)) != 0 {
			return true
		}
	}
	return false
}

func mkfile(p string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, nil, 0o644)
}

// analysed waits until the server of path has published its diagnostics
// for it once: its initial analysis is over. On a busy machine a cold
// pyright needs more than a check's bound for it (node loading, then the
// builtins: 40 s seen on two loaded cores), and its first edit's result
// then says, rightly, "incomplete"; a test about what a warm server
// reports starts from a warm one. The cold start has tests of its own.
func analysed(t testing.TB, m *Manager, path string) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Minute); ; {
		_, note, err := m.Diagnostics(context.Background(), path)
		if err == nil && note == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no first analysis of %s in 3 minutes: %v %s", path, err, note)
		}
	}
}
