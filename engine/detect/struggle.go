package detect

import (
	"fmt"
	"time"
)

// Level says how bad a struggle is. There are two levels, not a score,
// because the user acts on exactly that distinction: wait and watch, or
// rephrase and start again.
type Level int

const (
	// Warning: mm noticed something and the turn goes on (a loop was
	// warned, a broken call was given back, the context is nearly full).
	Warning Level = iota + 1
	// Severe: the turn was stopped or failed because of it.
	Severe
)

func (l Level) String() string {
	switch l {
	case Warning:
		return "warning"
	case Severe:
		return "severe"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Kind names what was detected. Front ends may switch on it to pick a
// colour or an icon; they never parse Text.
type Kind string

// The kinds of struggle. The list is open: the engine may report kinds
// that no detector of this package produces (stalled, server_error…), and
// uses these names so that every front end and --json agree.
const (
	KindLoop         Kind = "loop"           // same call, same result, again
	KindStuck        Kind = "stuck"          // the loop went on despite the warning
	KindFailing      Kind = "failing"        // N failed tool calls in a row
	KindRunaway      Kind = "runaway"        // arguments repeating or too long
	KindBrokenCall   Kind = "broken_call"    // arguments not valid JSON
	KindUnknownTool  Kind = "unknown_tool"   // a tool that does not exist
	KindTextToolCall Kind = "text_tool_call" // a tool call written as text
	KindToolBudget   Kind = "tool_budget"    // many tool calls in one turn
	KindStalled      Kind = "stalled"        // no token for too long
	KindMaxTurns     Kind = "max_turns"      // maxTurns reached
	KindServerError  Kind = "server_error"   // the server failed
	KindEmptyAnswer  Kind = "empty_answer"   // the model said nothing
)

// Struggle is "the model is struggling", as shown to the user apart from
// the answer. It is never stored in history and never sent to the model:
// what the model must read is a separate note returned by each detector.
type Struggle struct {
	Level Level
	Kind  Kind
	// Text is one short human line, e.g. "loop: bash ×3 — the model was
	// told to change approach". It does not start with the level mark (⚠,
	// ✖): rendering is the front end's job.
	Text string
}

func (s Struggle) String() string { return s.Level.String() + ": " + s.Text }

// Report receives struggles where they are detected (ARCHITECTURE:
// detections report where they happen). A nil Report drops them; detectors
// call it synchronously, from the goroutine that fed them.
type Report func(Struggle)

func (r Report) report(s Struggle) {
	if r != nil {
		r(s)
	}
}

// The constructors below are for the struggles the engine detects itself
// (it owns the clocks and the server errors). Keeping their wording here
// keeps every struggle text in one place.

// Stalled is the watchdog's struggle: no token for d, turn stopped.
func Stalled(d time.Duration) Struggle {
	return Struggle{Severe, KindStalled, fmt.Sprintf("stalled: no token for %s — turn stopped", d.Round(time.Second))}
}

// MaxTurns is reported when maxTurns was reached and the last-chance
// summary was asked for.
func MaxTurns(n int) Struggle {
	return Struggle{Severe, KindMaxTurns, fmt.Sprintf("max turns: %d model calls — asked the model to sum up", n)}
}

// ServerError wraps the one Explain line of a server failure.
func ServerError(explain string) Struggle {
	return Struggle{Severe, KindServerError, "server error: " + explain}
}

// EmptyAnswer is reported when a turn ends with no text and no tool call.
func EmptyAnswer() Struggle {
	return Struggle{Severe, KindEmptyAnswer, "empty answer: the model said nothing"}
}
