//go:build !windows

package trust

import (
	"fmt"
	"io/fs"
	"syscall"
)

// identity names a file's content as the file system tracks it: its
// device and inode, size, and modification and change times. The change
// time cannot be set back by a program, so a rewrite always shows.
func identity(p string, fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s\x00%d\x00%d\x00%d\x00%d\x00%d", p, st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano(), ctime(st))
}
