package store

import "errors"

// ErrNotFound is returned by Load for an id the store does not hold.
var ErrNotFound = errors.New("no such session")

// ErrBadID is returned for an id that is not one mm makes (it could
// otherwise name a path outside the store).
var ErrBadID = errors.New("not a session id")

// ErrInUse is returned while another mm runs a turn of the session.
var ErrInUse = errors.New("in use by another mm: a turn is running there")

// ErrChanged is returned when another mm wrote the session since this
// one loaded it: writing would replace that mm's turns.
var ErrChanged = errors.New("continued by another mm since it was loaded here")

// errBusy is tryLock's answer for a lock held elsewhere.
var errBusy = errors.New("lock held")

// ErrOtherWorkspace is returned by LoadIn for a session of another
// workspace.
var ErrOtherWorkspace = errors.New("a session belongs to the workspace it was started in")

// WorkspaceError names the workspace a session belongs to.
type WorkspaceError struct{ ID, Cwd string }

func (e *WorkspaceError) Error() string {
	return "session " + e.ID + " belongs to the workspace " + e.Cwd
}

// Is makes errors.Is(err, ErrOtherWorkspace) hold.
func (e *WorkspaceError) Is(target error) bool { return target == ErrOtherWorkspace }
