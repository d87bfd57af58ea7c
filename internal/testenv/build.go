package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Build builds the Go program in dir (a package directory, relative to
// the test's own) with go build's flags and returns the binary's path.
//
// The binary goes to the same place from one run to the next — under
// the user's cache directory, keyed by the package's absolute directory
// and the flags, so two checkouts or two flag sets never share one — and
// go build relinks it only when something it is built from changed. A
// race-built mm takes about 7 CPU-seconds to link: a rerun of the tests
// with nothing changed does not pay it. Builds of the same binary by
// test processes running side by side take turns (a lock file beside
// it). When that place cannot be used, the binary is built in a new
// temporary directory instead.
func Build(dir, name string, flags ...string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs + "\x00" + strings.Join(flags, "\x00")))
	if cache, err := os.UserCacheDir(); err == nil {
		out := filepath.Join(cache, "mm-tests", hex.EncodeToString(sum[:8]))
		if bin, err := buildLocked(abs, filepath.Join(out, name), flags); err == nil {
			return bin, nil
		}
	}
	tmp, err := os.MkdirTemp("", "mm-tests-")
	if err != nil {
		return "", err
	}
	return goBuild(abs, filepath.Join(tmp, name), flags)
}

// buildLocked runs go build into bin while holding bin's lock file.
func buildLocked(pkg, bin string, flags []string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	f, err := os.OpenFile(bin+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return "", err
	}
	for !lockFile(f) {
		time.Sleep(20 * time.Millisecond)
	}
	defer unlockFile(f)
	return goBuild(pkg, bin, flags)
}

func goBuild(pkg, bin string, flags []string) (string, error) {
	args := append(append([]string{"build", "-o", bin}, flags...), ".")
	cmd := exec.Command("go", args...)
	cmd.Dir = pkg
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}
