package store

import "errors"

// ErrNotFound is returned by Load for an id the store does not hold.
var ErrNotFound = errors.New("no such session")

// ErrBadID is returned for an id that is not one mm makes (it could
// otherwise name a path outside the store).
var ErrBadID = errors.New("not a session id")
