//go:build unix

package disk

import "syscall"

// nonBlock opens a FIFO without waiting for a writer; it changes nothing
// for a regular file.
const nonBlock = syscall.O_NONBLOCK
