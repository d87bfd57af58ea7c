package detect

import "errors"

// ErrStuck ends a turn on purpose: the model went on repeating the same
// tool calls after the loop warning. It is the only detector outcome
// that is an error; wrap it with what was repeated (LoopVerdict.Err) and
// compare with errors.Is.
var ErrStuck = errors.New("stuck")
