//go:build !unix

package store

import "os"

// tryLock is a no-op where flock does not exist: one writer per session
// is then not enforced across processes.
func tryLock(*os.File) error { return nil }

func unlockFile(f *os.File) { f.Close() }

// inode reports only whether the file exists.
func inode(path string) (uint64, bool) {
	_, err := os.Stat(path)
	return 0, err == nil
}
