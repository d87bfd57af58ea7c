package disk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular marks a path that is not a regular file (a FIFO, a
// device, a socket): mm never reads or replaces one.
var ErrNotRegular = errors.New("not a regular file")

// ErrOutside marks a path that leaves its root, lexically or through a
// symlink.
var ErrOutside = errors.New("outside the workspace")

// ErrChanged marks a write refused because a directory on its way was
// swapped (for a link, a file) while the write was finding its place.
var ErrChanged = errors.New("a directory on the way changed while it was being written")

// TooLargeError is a file over the reader's limit.
type TooLargeError struct {
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the file is %s, more than the %s mm reads", Human(e.Size), Human(e.Limit))
}

// Human writes a byte count the way a user reads it: "512 B", "2.0 MiB".
func Human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// escapes reports whether err is os.Root's refusal to leave its root. Go
// does not export that error, so it is recognised by its text; the
// refusal itself is os.Root's, this only chooses the wording.
func escapes(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	default:
		return false
	}
	return err != nil && err.Error() == "path escapes from parent"
}

// outside wraps a root's refusal as ErrOutside, naming the path.
func outside(path string) error {
	return fmt.Errorf("%s: %w (a symlink or .. leads out of it)", path, ErrOutside)
}
