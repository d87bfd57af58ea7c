package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
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
