package logfile

import (
	"os"
)

// maxLogBytes bounds mm.log in the state directory: line mode and the
// REPL log there on every run, and nothing else ever trims it. Past the
// bound the file moves to mm.log.1 (replacing the one before) and a new
// one starts, so the logs take at most twice the bound.
const maxLogBytes = 8 << 20

// rotatingFile is an append-only log file that rotates past max bytes.
// slog's handlers serialise their writes, so it needs no lock of its own.
type rotatingFile struct {
	path string
	max  int64
	f    *os.File
	size int64
}

func openRotating(path string, max int64) (*rotatingFile, error) {
	r := &rotatingFile{path: path, max: max}
	if err := r.open(); err != nil {
		return nil, err
	}
	if r.size >= max {
		r.rotate()
	}
	return r, nil
}

func (r *rotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	r.f, r.size = f, 0
	if fi, err := f.Stat(); err == nil {
		r.size = fi.Size()
	}
	return nil
}

// rotate moves the full file aside and starts a new one; when that fails
// the old file is kept and written on (a log is never worth a failure).
func (r *rotatingFile) rotate() {
	if os.Rename(r.path, r.path+".1") != nil {
		return
	}
	old := r.f
	if r.open() != nil {
		r.f = old
		return
	}
	old.Close()
}

func (r *rotatingFile) Write(p []byte) (int, error) {
	if r.size > 0 && r.size+int64(len(p)) > r.max {
		r.rotate()
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

func (r *rotatingFile) Close() error { return r.f.Close() }
