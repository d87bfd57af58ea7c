package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// bind is one tree mounted at its own path in the command's view.
type bind struct {
	path     string
	source   string // "" for path itself
	readOnly bool
	fd       int // the detached copy, taken before anything is covered
}

// build makes the view of the file system the plan says, in the new
// mount namespace:
//
//  1. a detached copy of every tree to show is taken first (open_tree),
//     from the file system as it is, so that a workspace under /tmp, or
//     a kept socket under /run, can be put back once those are covered;
//  2. every mount is made read-only (mount_setattr, recursively);
//  3. /tmp, /var/tmp, /run and /dev/shm are covered by empty file
//     systems (/tmp by the plan's private directory), /proc by the new
//     pid namespace's, /dev/pts by a new instance;
//  4. the copies are attached at their paths, shortest first, so that
//     what runs later goes read-only over the writable workspace above
//     it; the writable ones keep the write access they had.
//
// The copies live in this namespace only: nothing changes for any other
// process, and everything goes when the namespace ends.
func build(p Plan, keptSockets, dropped []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	var binds []bind
	add := func(path, source string, readOnly bool) {
		binds = append(binds, bind{path: filepath.Clean(path), source: source, readOnly: readOnly, fd: -1})
	}
	for _, d := range p.Writable {
		add(d, "", false)
	}
	for _, d := range p.ReadOnly {
		add(d, "", true)
	}
	for _, s := range keptSockets {
		add(s, "", true) // read-only does not stop a connect: kept means reachable
	}
	for _, s := range dropped {
		if visible(s, append(slices.Clone(p.Writable), p.ReadOnly...)) {
			add(s, os.DevNull, true)
		}
	}
	if p.Tmp != "" {
		add("/tmp", p.Tmp, false)
	}
	for _, d := range devices {
		add("/dev/"+d, "/dev/"+d, false)
	}
	// Shortest first; at the same path, read-only last, so it wins.
	slices.SortStableFunc(binds, func(a, b bind) int {
		if d := len(a.path) - len(b.path); d != 0 {
			return d
		}
		return boolInt(a.readOnly) - boolInt(b.readOnly)
	})
	defer func() {
		for _, b := range binds {
			if b.fd >= 0 {
				unix.Close(b.fd)
			}
		}
	}()
	kept := binds[:0]
	for _, b := range binds {
		src := b.path
		if b.source != "" {
			src = b.source
		}
		fd, err := copyOf(src, b.readOnly)
		if err != nil {
			return err
		}
		if fd < 0 {
			continue // gone since mm looked: nothing to show
		}
		b.fd = fd
		kept = append(kept, b)
	}
	binds = kept
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("make the file system read-only: %w", err)
	}
	if err := cover(p.Tmp != ""); err != nil {
		return err
	}
	for _, b := range binds {
		if err := attach(b); err != nil {
			return err
		}
	}
	return nil
}

// copyOf takes a detached copy of the tree at src (open_tree), read-only
// when asked; -1 when there is nothing at src.
func copyOf(src string, readOnly bool) (int, error) {
	fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("copy %s: %w", src, err)
	}
	if readOnly {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("make %s read-only: %w", src, err)
		}
	}
	return fd, nil
}

// bindReadOnly binds the tree at path read-only over itself in the view
// build made: what mm learnt only once the plan had gone (the hooks
// directory), from the view itself, so that it lands over whatever the
// view shows there. A path the view does not show is out of reach
// already.
func bindReadOnly(path string) error {
	fd, err := copyOf(path, true)
	if err != nil || fd < 0 {
		return err
	}
	defer unix.Close(fd)
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("show %s read-only: %w", path, err)
	}
	return nil
}

// devices are the entries of /dev a command gets: the rest — disks,
// the session's terminals — is not there. A command whose user is root
// in its namespace is root on the host's files it can reach: a disk's
// device file would be its to write.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// cover puts fresh file systems over the hidden directories, /dev and
// /proc.
func cover(privateTmp bool) error {
	if err := newDev(); err != nil {
		return err
	}
	for _, d := range hidden {
		if d == "/tmp" && privateTmp || d == "/dev/shm" {
			continue // the private directory goes there (attach); /dev is new
		}
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue // absent, or a link to one of the others
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return fmt.Errorf("cover %s: %w", d, err)
		}
	}
	// Read-only: a root command would otherwise write the host's
	// sysctls (kernel.core_pattern runs a program as root).
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

// newDev makes /dev a small file system of its own, as a container's:
// the devices (attached later, from the host's), a new instance of
// /dev/pts holding only the command's own terminals, an empty /dev/shm,
// and the usual links.
func newDev() error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755"); err != nil {
		return fmt.Errorf("cover /dev: %w", err)
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod("/dev/shm", 0o1777); err != nil {
		return err
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	for link, target := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, "/dev/"+link); err != nil {
			return err
		}
	}
	return nil
}

// attach mounts b's copy at its path, making the path first when a
// covering file system hid it.
func attach(b bind) error {
	if _, err := os.Lstat(b.path); errors.Is(err, os.ErrNotExist) {
		if err := makeMountPoint(b); err != nil {
			return fmt.Errorf("show %s: %w", b.path, err)
		}
	}
	if err := unix.MoveMount(b.fd, "", unix.AT_FDCWD, b.path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("show %s: %w", b.path, err)
	}
	return nil
}

// makeMountPoint creates b.path, a directory or an empty file like what
// its copy holds, with the directories above it.
func makeMountPoint(b bind) error {
	var st unix.Stat_t
	if err := unix.Fstat(b.fd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return os.MkdirAll(b.path, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(b.path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(b.path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	return f.Close()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
