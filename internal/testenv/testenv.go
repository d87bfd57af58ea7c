package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Required reports whether a missing prerequisite must fail the test
// rather than skip it (MM_REQUIRE_INTEGRATION=1).
func Required() bool { return os.Getenv("MM_REQUIRE_INTEGRATION") == "1" }

// Unavailable stops the test because something it needs is missing:
// it skips with the reason, or fails under MM_REQUIRE_INTEGRATION=1.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s; MM_REQUIRE_INTEGRATION=1 makes that a failure, not a skip", why)
	}
	t.Skip(why)
}

// install says how to get each tool the tests drive, at the versions
// scripts/test installs (keep the two in step).
var install = map[string]string{
	"gopls":              "go install golang.org/x/tools/gopls@v0.23.0",
	"pyright-langserver": "npm install -g pyright@1.1.414",
	"acpx":               "npm install -g acpx@0.19.1",
	"git":                "apt-get install git",
	"prlimit":            "apt-get install util-linux",
	"unshare":            "apt-get install util-linux",
	"tmux":               "apt-get install tmux",
}

// NeedTool returns the path of a real tool the test drives (gopls,
// pyright, acpx…), or stops the test through Unavailable saying how to
// install it.
func NeedTool(t testing.TB, bin string) string {
	t.Helper()
	p, err := exec.LookPath(bin)
	if err != nil {
		how, ok := install[bin]
		if !ok {
			how = "install it"
		}
		Unavailable(t, "%s is not on PATH (%v): %s to run this integration test (scripts/test does)", bin, err, how)
	}
	return p
}

// Timeout bounds a test's Context: far above any healthy run, far below
// go test's own ten-minute panic, so a hung test fails with its own name
// and a readable error.
const Timeout = 60 * time.Second

// Context is a context for one test that ends after Timeout or when the
// test's cleanups run. Unlike t.Context, it stays live inside cleanups
// registered before it, so they can still shut down what they started.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	t.Cleanup(cancel)
	return ctx
}

// ReadOnlyDir makes dir refuse new entries, and restores it when the
// test ends: by its mode for a normal user; root ignores modes, so there
// the directory is made immutable with chattr when the file system allows
// it, and the test is skipped when it does not.
func ReadOnlyDir(t testing.TB, dir string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("directory modes are not enforced on windows")
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		t.Skipf("running as root and chattr +i is unavailable: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
}

// GoHome prepares home, a test's own $HOME, for the Go tools mm starts
// there (gopls and the go commands it runs), and returns the variables to
// add to the test's environment. Without it they would write caches into
// home, cold for every test, and gopls' telemetry sidecar — which leaves
// the server's process group on purpose and so outlives mm — would still
// be writing there when the test removes the directory. The build,
// module and gopls caches are the runner's own, shared and warm;
// telemetry is off in home.
func GoHome(t testing.TB, home string) []string {
	t.Helper()
	env, err := PrepareGoHome(home)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// PrepareGoHome is GoHome for callers without a testing.TB (testscript's
// Setup).
func PrepareGoHome(home string) ([]string, error) {
	mode := filepath.Join(home, ".config", "go", "telemetry", "mode")
	if err := os.MkdirAll(filepath.Dir(mode), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(mode, []byte("off"), 0o644); err != nil {
		return nil, err
	}
	c := goCaches()
	env := []string{"GOTOOLCHAIN=local"}
	if c.err != nil {
		return env, nil // no go command: nothing will run one
	}
	return append(env, "GOCACHE="+c.build, "GOMODCACHE="+c.mod, "GOPLSCACHE="+c.gopls), nil
}

type caches struct {
	build, mod, gopls string
	err               error
}

// goCaches asks the go command once where the runner's caches are.
var goCaches = sync.OnceValue(func() caches {
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		return caches{err: err}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		return caches{err: fmt.Errorf("go env printed %q", out)}
	}
	user, err := os.UserCacheDir()
	if err != nil {
		return caches{err: err}
	}
	return caches{build: lines[0], mod: lines[1], gopls: filepath.Join(user, "gopls")}
})

// NeedLanguageServer is NeedTool for gopls, pyright and the like: it also
// waits for one of a few slots for a language server, shared by every
// test process of the machine (go test runs packages side by side) and
// held until the test ends. gopls and pyright each want a core while
// they analyse; beside too many others, on two cores, they miss the
// deadlines the tests hold them to. Call it before the test starts
// anything that is timed.
func NeedLanguageServer(t testing.TB, bin string) string {
	t.Helper()
	p := NeedTool(t, bin)
	release, err := languageServerSlot()
	if err != nil {
		t.Fatalf("waiting for a language-server slot: %v", err)
	}
	t.Cleanup(release)
	return p
}

// languageServerSlots is how many language servers the tests of the
// machine run at once.
func languageServerSlots() int { return max(2, runtime.NumCPU()/2) }

// languageServerSlot takes one of the slots: a lock file in the temporary
// directory (one set per user: another user's files could not be
// opened), tried in turn until one is free.
func languageServerSlot() (release func(), err error) {
	for {
		for i := range languageServerSlots() {
			path := filepath.Join(os.TempDir(), fmt.Sprintf("mm-test-language-server-%d-%d.lock", os.Getuid(), i))
			f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
			if err != nil {
				return nil, err
			}
			if lockFile(f) {
				return func() { unlockFile(f) }, nil
			}
			f.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WantIn fails t, naming what, for each of wants that text lacks: the
// loop every test of printed output would otherwise write again.
func WantIn(t testing.TB, what, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", what, want, text)
		}
	}
}
