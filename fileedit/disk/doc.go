// Package disk is mm's one way to the file system for the files it reads
// and writes on its own: the file tools' view of the disk, the language
// servers' sources, the project context, skills and config files.
//
// Its invariants:
//   - A read takes a regular file only: a FIFO, a device or a socket is
//     refused before a byte is read (opening does not block either), so
//     `x.py -> /dev/zero` or a named pipe cannot hang or exhaust mm.
//   - A read is bounded: a file over the caller's limit is refused with a
//     *TooLargeError saying its size, before it is loaded.
//   - A read stops when its context ends.
//   - Inside a root, every operation goes through os.Root, which refuses
//     at the moment of the operation to follow a symlink or ".." out of
//     the root: a directory swapped for a link while a permission prompt
//     was open cannot send a write outside.
//   - A write inside a root finds the directory it lands in one component
//     at a time, following links only inside the root, and holds that
//     directory open while it writes: a caller's check (WriteAtomicChecked)
//     sees the real path, and the bytes go exactly there.
//   - A write is atomic (temporary file, sync, rename) and leaves the
//     original byte-identical and no temporary file behind on failure; a
//     final link pointing inside the root is written through, one pointing
//     outside is refused.
//
// It is a leaf package: the standard library only.
package disk
