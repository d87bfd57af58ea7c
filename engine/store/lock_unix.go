//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive advisory lock on f without waiting;
// errBusy when another open file holds it (another mm, or another
// lease of this one).
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errBusy
		}
		return err
	}
}

// unlockFile lets the lock go, then closes f. Closing alone is not
// enough: the lock belongs to the open file, which a child forked by
// another goroutine shares until it execs — and until then the session
// would look in use by another mm to this very process's next turn.
func unlockFile(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// inode identifies the file at path: a rename puts a new one in place,
// so a changed inode means another writer replaced the file.
func inode(path string) (uint64, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), true
	}
	return 0, true
}
