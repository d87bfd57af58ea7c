package lspbridge

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mm-agent/mm/internal/testenv"
)

func TestGoRestartAfterKill(t *testing.T) {
	testenv.NeedTool(t, "gopls")
	dir := fixture(t, "go/typeerr")
	m := newTestManager(t, dir)
	path := filepath.Join(dir, "main.go")
	if got := edit(t, m, path, "return n * 2", "return n * 3"); got != "gopls: no problems" {
		t.Fatalf("first edit: %q", got)
	}
	s := m.serverFor(path, false)
	s.mu.Lock()
	pid := s.cur.cmd.Process.Pid
	s.mu.Unlock()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	got := edit(t, m, path, "return n * 3", `return "thrice"`)
	t.Logf("after kill and edit:\n%s", got)
	wantAll(t, got, []string{"note: gopls stopped (signal: killed) and was restarted", "introduced 1 error", `main.go:6:9: cannot use "thrice"`}, nil)
	s.mu.Lock()
	newPid := s.cur.cmd.Process.Pid
	s.mu.Unlock()
	if newPid == pid {
		t.Error("gopls was not restarted")
	}
	if p, ok := testenv.Processes()[itoa(pid)]; ok {
		t.Errorf("killed gopls %d is still there: %v", pid, p)
	}
}

// crossPackage is gopls on the go/crosspkg fixture, where b.go calls
// a.Scale, clean before any change: its directory, manager and two files.
func crossPackage(t *testing.T) (dir string, m *Manager, a, b string) {
	t.Helper()
	testenv.NeedTool(t, "gopls")
	dir = fixture(t, "go/crosspkg")
	m = newTestManager(t, dir)
	a, b = filepath.Join(dir, "a", "a.go"), filepath.Join(dir, "b", "b.go")
	if list, note, err := m.Diagnostics(context.Background(), b); err != nil || len(list) != 0 || note != "" {
		t.Fatalf("b.go before: %v %q %v", list, note, err)
	}
	return dir, m, a, b
}

// changeScale changes a.Scale's signature on disk, behind the server's
// back, as a command would: b.go's call no longer fits.
func changeScale(t *testing.T, a string) {
	t.Helper()
	data, _ := os.ReadFile(a)
	if err := os.WriteFile(a, []byte(strings.Replace(string(data), "Scale(n int)", "Scale(n, m int)", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGoChangedByBash: a file changed behind mm's back is seen once
// Changed is called, as after bash.
func TestGoChangedByBash(t *testing.T) {
	dir, m, a, b := crossPackage(t)
	ctx := context.Background()
	changeScale(t, a)
	m.Changed(ctx, []string{a})
	list, note, err := m.Diagnostics(ctx, b)
	if err != nil || note != "" {
		t.Fatalf("b.go after: %v %q", err, note)
	}
	if len(list) != 1 || !strings.Contains(list[0].Message, "not enough arguments in call to a.Scale") {
		t.Errorf("b.go after a.go changed on disk: %+v", list)
	}
	// The whole module, from the directory.
	all, _, err := m.Diagnostics(ctx, dir)
	if err != nil || len(all) != 1 {
		t.Errorf("module diagnostics: %+v %v", all, err)
	}
}

// TestGoChangedSince: the bash hook finds what a command changed by
// modification time.
func TestGoChangedSince(t *testing.T) {
	dir, m, a, b := crossPackage(t)
	ctx := context.Background()
	// The fixture was copied just now: date it back, as an old checkout.
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(dir, func(p string, _ fs.DirEntry, _ error) error { return os.Chtimes(p, old, old) })
	start := time.Now()
	changeScale(t, a)
	if got := m.running()[0].modifiedSince(ctx, start); len(got) != 1 || got[0] != a {
		t.Errorf("modified since the command: %v", got)
	}
	got := m.ChangedSince(ctx, start, nil)
	t.Logf("after the command:\n%s", got)
	// gopls checks the whole module: a.go, never opened, is compared
	// without line numbers, and b.go's new error is the command's.
	wantAll(t, got, []string{"gopls: this command introduced 1 error:", "b/b.go:8:18: not enough arguments in call to a.Scale"}, []string{"no problems", "already there"})
	list, note, err := m.Diagnostics(ctx, b)
	if err != nil || note != "" || len(list) != 1 {
		t.Errorf("b.go after: %+v %q %v", list, note, err)
	}
}

// TestBoundedWait: a server that never answers gets an honest
// "incomplete", never "no problems", within the bound.
func TestBoundedWait(t *testing.T) {
	dir := fixture(t, "go/typeerr")
	cfg := DefaultConfig()
	cfg.Servers = map[string]ServerConfig{"go": {
		Command:     []string{"sh", "-c", "exec cat >/dev/null"},
		RootMarkers: []string{"go.mod"},
		Extensions:  []string{".go"},
	}}
	cfg.Wait, cfg.MaxWait = 300*time.Millisecond, 300*time.Millisecond
	m := New(cfg)
	defer func() {
		if err := m.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if kids := children(t); len(kids) > 0 {
			t.Errorf("left after Close: %v", kids)
		}
	}()
	start := time.Now()
	got := edit(t, m, filepath.Join(dir, "main.go"), "return n * 2", `return "twice"`)
	// The bound is what is asserted; the limit only tells "bounded" from
	// "waited for a server that never answers" on a loaded machine.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("edit took %v with a 300ms bound: hung", d)
	}
	wantAll(t, got, []string{"sh: diagnostics incomplete after", "is still starting", "problems may exist"}, []string{"no problems", "no new errors"})
}

func TestCloseWithoutServers(t *testing.T) {
	m := New(Config{})
	if m.Available() {
		t.Error("available with no servers")
	}
	if snap := m.Before(context.Background(), "x.go"); snap != nil {
		t.Error("snapshot without servers")
	}
	if got := m.After(context.Background(), nil, nil); got != "" {
		t.Errorf("After(nil) = %q", got)
	}
	if err := m.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestVenvPythonPath: a venv's interpreter goes to pyright when it is a
// link to a Python outside the workspace (a real venv) or when nothing is
// confined (a trusted workspace); a file of the workspace does not, and
// the venv's site-packages go to extraPaths instead.
func TestVenvPythonPath(t *testing.T) {
	cfg := DefaultConfig().Servers["python"]
	root := t.TempDir()
	py := filepath.Join(root, ".venv", "bin", "python")
	site := filepath.Join(root, ".venv", "lib", "python3.12", "site-packages")
	if err := mkfile(py); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(site, 0o755); err != nil {
		t.Fatal(err)
	}
	pythonPath := func(confine ...string) (any, any) {
		settings, _ := settingsFor(cfg, root, confine)
		got, _ := lookupPath(settings, "python.pythonPath")
		extra, _ := lookupPath(settings, "python.analysis.extraPaths")
		return got, extra
	}
	if got, extra := pythonPath(root); got != nil || !reflect.DeepEqual(extra, []any{site}) {
		t.Errorf("a file of the workspace: pythonPath = %v, extraPaths = %v", got, extra)
	}
	if got, extra := pythonPath(); got != py || extra != nil {
		t.Errorf("nothing confined: pythonPath = %v, extraPaths = %v", got, extra)
	}
	// A real venv: bin/python links to a Python outside the workspace.
	outside := filepath.Join(t.TempDir(), "python3")
	if err := mkfile(outside); err != nil {
		t.Fatal(err)
	}
	os.Remove(py)
	if err := os.Symlink(outside, py); err != nil {
		t.Fatal(err)
	}
	if got, _ := pythonPath(root); got != py {
		t.Errorf("a link out of the workspace: pythonPath = %v", got)
	}
	// A link to another file of the workspace is the workspace's program.
	inside := filepath.Join(root, "tools", "run.sh")
	if err := mkfile(inside); err != nil {
		t.Fatal(err)
	}
	os.Remove(py)
	if err := os.Symlink("../../tools/run.sh", py); err != nil {
		t.Fatal(err)
	}
	if got, _ := pythonPath(filepath.Join(root, ".venv"), root); got != nil {
		t.Errorf("a link into the workspace: pythonPath = %v", got)
	}
	if _, ok := lookupPath(mustSettings(settingsFor(cfg, t.TempDir(), nil)), "python.pythonPath"); ok {
		t.Error("pythonPath set without a venv")
	}
	// The default settings are not changed by a root's venv.
	if _, ok := lookupPath(cfg.Settings, "python.pythonPath"); ok {
		t.Error("settingsFor changed the shared config")
	}
	if _, ok := lookupPath(cfg.Settings, "python.analysis.extraPaths"); ok {
		t.Error("settingsFor changed the shared config")
	}
}

func mustSettings(m map[string]any, _ string) map[string]any { return m }

// TestWarmDoesNotBlock: Warm returns before the server is ready (a server
// that never answers initialize does not hold it), and the server is
// ready later.
func TestWarmDoesNotBlock(t *testing.T) {
	mute := fixture(t, "go/typeerr")
	cfg := DefaultConfig()
	cfg.Servers = map[string]ServerConfig{"go": {
		Command:     []string{"sh", "-c", "exec cat >/dev/null"},
		RootMarkers: []string{"go.mod"},
		Extensions:  []string{".go"},
	}}
	silent := New(cfg)
	silent.Warm(context.Background(), mute)
	silent.wg.Wait()
	if err := silent.Close(context.Background()); err != nil {
		t.Error(err)
	}

	testenv.NeedTool(t, "gopls")
	dir := fixture(t, "go/crosspkg")
	m := newTestManager(t, dir)
	m.Warm(context.Background(), dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.wg.Wait() // Warm's scan runs on a goroutine of the Manager
	s := m.serverFor(filepath.Join(dir, "a", "a.go"), false)
	if s == nil {
		t.Fatal("Warm started no server for the module")
	}
	if _, err := s.ready(ctx); err != nil {
		t.Fatal(err)
	}
	if s.root != dir {
		t.Errorf("root = %s, want %s", s.root, dir)
	}
}

// TestConcurrentEdits: edits of two files at once each get their own
// answer (run with -race).
func TestConcurrentEdits(t *testing.T) {
	testenv.NeedTool(t, "gopls")
	dir := fixture(t, "go/crosspkg")
	m := newTestManager(t, dir)
	out := make([]string, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		out[0] = edit(t, m, filepath.Join(dir, "a", "a.go"), "return n * 3", `return "x"`)
	}()
	out[1] = edit(t, m, filepath.Join(dir, "b", "b.go"), "return a.Scale(3)", "return a.Scale(3) + nope")
	<-done
	wantAll(t, out[0], []string{`a/a.go:6:9: cannot use "x"`}, nil)
	wantAll(t, out[1], []string{"b/b.go:8:22: undefined: nope"}, nil)
}

// TestCloseLeavesNothing: with gopls and pyright both running, Close
// leaves no process of theirs — no child, no zombie, nothing in their
// process groups.
func TestCloseLeavesNothing(t *testing.T) {
	testenv.NeedTool(t, "gopls")
	testenv.NeedTool(t, "pyright-langserver")
	dir := fixture(t, "mixed")
	cfg := DefaultConfig()
	cfg.Wait = 30 * time.Second
	m := New(cfg)
	m.Warm(context.Background(), dir)
	m.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := m.running()
	if len(servers) != 2 {
		t.Fatalf("Warm started %d servers, want gopls and pyright", len(servers))
	}
	pids := map[string]bool{}
	for _, s := range servers {
		p, err := s.ready(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pids[itoa(p.cmd.Process.Pid)] = true
	}
	// Diagnostics make gopls run `go list` children too.
	if _, _, err := m.Diagnostics(ctx, filepath.Join(dir, "main.go")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Diagnostics(ctx, filepath.Join(dir, "tool.py")); err != nil {
		t.Fatal(err)
	}
	groups := serverGroups(m)
	if err := m.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	all := testenv.Processes()
	for pid := range pids {
		if p, ok := all[pid]; ok {
			t.Errorf("server %s still there: %v", pid, p)
		}
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("children left: %v", kids)
	}
	if left := inGroups(groups); len(left) > 0 {
		t.Errorf("left in the servers' groups: %v", left)
	}
}

// stopsReading is a language server that answers initialize, then never
// reads its input again: a server wedged in a long computation.
const stopsReading = `IFS= read -r h; n=$(printf %s "$h" | tr -dc 0-9); IFS= read -r blank
body=$(head -c "$n"); id=$(printf %s "$body" | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
resp='{"jsonrpc":"2.0","id":'"$id"',"result":{"capabilities":{"textDocumentSync":1}}}'
printf 'Content-Length: %d\r\n\r\n%s' "${#resp}" "$resp"
exec sleep 1000`

// TestServerThatStopsReading: the notification of a large document
// blocks on the full pipe of a server that stopped reading. The write is
// bounded, so sendMu is not held forever and later edits do not wait
// behind it: the server is restarted with a notice, the edit ends with an
// honest "incomplete", and no process is left.
func TestServerThatStopsReading(t *testing.T) {
	defer func(d time.Duration) { notifyTimeout = d }(notifyTimeout)
	notifyTimeout = 300 * time.Millisecond
	dir := fixture(t, "go/typeerr")
	big := filepath.Join(dir, "big.go")
	if err := os.WriteFile(big, []byte("package main\n\n// "+strings.Repeat("x", 1<<20)+"\nvar Big = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newTestManagerWith(t, dir, func(cfg *Config) {
		cfg.Servers = map[string]ServerConfig{"go": {
			Command:     []string{"bash", "-c", stopsReading},
			RootMarkers: []string{"go.mod"},
			Extensions:  []string{".go"},
		}}
	})
	m.cfg.Wait = 2 * time.Second
	done := make(chan string, 1)
	go func() { done <- edit(t, m, big, "var Big = 1", "var Big = 2") }()
	var got string
	select {
	case got = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the edit hung on a server that stopped reading")
	}
	wantAll(t, got, []string{"incomplete"}, []string{"no problems", "no new errors"})
	// A second edit is not held behind the first one's write.
	go func() { done <- edit(t, m, big, "var Big = 2", "var Big = 3") }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the second edit hung behind the first")
	}
}
