package lspbridge

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/sourcegraph/conc/panics"
)

// goSafe runs f on a goroutine joined by wg. A panic in f is recovered
// (github.com/sourcegraph/conc/panics) and reported as one line instead of
// killing mm; recovered, when not nil, then runs with that line.
func goSafe(wg *sync.WaitGroup, log *slog.Logger, what string, f func(), recovered func(line string)) {
	wg.Go(func() {
		if line := try(log, what, f); line != "" && recovered != nil {
			recovered(line)
		}
	})
}

// try runs f; a panic is logged as one line (its stack at debug level)
// and returned as that line, "" when f returned normally.
func try(log *slog.Logger, what string, f func()) string {
	r := panics.Try(f)
	if r == nil {
		return ""
	}
	line := fmt.Sprintf("internal error in %s: %v", what, r.Value)
	log.Error(line + " (recovered)")
	log.Debug("recovered panic", "in", what, "stack", string(r.Stack))
	return line
}
