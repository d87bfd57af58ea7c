//go:build linux

package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// A child process that shares the lock's open file — as one forked by
// another goroutine does until it execs — must not keep the session
// locked once the lock was let go: the next turn of this mm would be
// refused as "in use by another mm".
func TestUnlockWhileAChildSharesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	unlock, err := lockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A descriptor of the open file that holds the lock, for the child
	// to inherit: a dup of the locked one, found in /proc/self/fd.
	var held *os.File
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, e := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == lockPath(path) {
			fd, _ := strconv.Atoi(e.Name())
			if dup, err := syscall.Dup(fd); err == nil {
				held = os.NewFile(uintptr(dup), "lock")
			}
			break
		}
	}
	if held == nil {
		t.Fatal("the lock's descriptor is not in /proc/self/fd")
	}
	child := exec.Command("sleep", "5")
	child.ExtraFiles = []*os.File{held}
	err = child.Start()
	held.Close() // the child has its own copy now
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })

	unlock()
	again, err := lockFile(path)
	if err != nil {
		t.Fatalf("the lock let go is still held while a child shares its file: %v", err)
	}
	again()
}
