package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// ChangedError says a file no longer holds what the change was computed
// from: the user (or another program) changed it while mm was working —
// typically while the permission prompt showing the diff was open.
type ChangedError struct {
	Path string // as the model writes it
}

func (e *ChangedError) Error() string {
	return e.Path + " changed since you read it (edited while mm was waiting?) — it was not written; read it again, then redo your change"
}

// WriteIfUnchanged writes data to path through env, but only if the file
// still holds old (existed=false: the file must still not exist). The file
// is read again right before the write — after the permission prompt — and
// its content compared, not its time stamp: an edit made while the diff was
// shown is never overwritten. Every writer of a file the model saw goes
// through here, so the check holds whatever env reads and writes (the
// disk, an editor's buffers). rel names the file in the error.
//
// It returns a *ChangedError when the file changed, the write's error when
// the write failed (the file is then unchanged: env.WriteFile is atomic).
func WriteIfUnchanged(ctx context.Context, env Env, path, rel string, old []byte, existed bool, data []byte, mode fs.FileMode) error {
	if err := Unchanged(ctx, env, path, rel, old, existed); err != nil {
		return err
	}
	return env.WriteFile(ctx, path, data, mode)
}

// Unchanged reports whether path still holds old (or, with existed=false,
// still does not exist), as WriteIfUnchanged checks it.
func Unchanged(ctx context.Context, env Env, path, rel string, old []byte, existed bool) error {
	cur, err := env.ReadFile(ctx, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if existed {
			return &ChangedError{Path: rel}
		}
		return nil
	case err != nil:
		return fmt.Errorf("read %s again before writing: %w", rel, err)
	case !existed || !bytes.Equal(cur, old):
		return &ChangedError{Path: rel}
	}
	return nil
}
