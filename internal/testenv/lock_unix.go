//go:build unix

package testenv

import (
	"os"
	"syscall"
)

// lockFile takes f's lock without waiting, and reports whether it did.
func lockFile(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// unlockFile lets the lock go — explicitly: a child forked meanwhile
// shares the open file until it execs — and closes f.
func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}
