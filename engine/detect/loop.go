package detect

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"sync"
)

// Loop detector thresholds, the original mm's, measured against a
// recorded case of thirty identical refused calls (18/09/2026, a 12B model):
// warned at the third, stopped at the sixth.
const (
	// LoopWarnAt is how many times a call (or a cycle of 2–3 calls) must
	// come with the same result for the model to be told it is looping.
	LoopWarnAt = 3
	// LoopStuckAfter is how many more calls in the same loop, after the
	// first warning, stop the turn.
	LoopStuckAfter = 3
	// FailingFrom is the number of failed calls in a row from which a
	// failing struggle is reported (a warning only: the model reads every
	// failure already, and a fourth try often works).
	FailingFrom = 3
	// maxPeriod is the longest cycle looked for.
	maxPeriod = 3
)

// ToolCall is one executed call as the loop detector sees it.
type ToolCall struct {
	Tool    string
	Input   string // raw JSON arguments
	Output  string // the text the model receives
	IsError bool
}

// LoopOptions configures a LoopDetector. The zero value works.
type LoopOptions struct {
	// Report receives the struggles (loop, stuck, failing), once per call
	// at most, the most severe one.
	Report Report
}

// LoopVerdict is what the engine must do after recording a call.
type LoopVerdict struct {
	// Level is 0 (nothing), Warning (append Note to the tool output the
	// model receives) or Severe (stuck: append Note, then end the turn with
	// Err).
	Level Level
	// Note is `[LOOP_DETECTED: …]` text for the model, or "".
	Note string
	// Times is how often the call (or the cycle) was repeated.
	Times int
	// Cycle is the tools of the repeated cycle, in order (one for a plain
	// repetition).
	Cycle []string
	// Path is set when the repeated call is a failed call on this file,
	// recognised by path and kind of error rather than exact text.
	Path string
}

// Stuck reports whether the turn must stop.
func (v LoopVerdict) Stuck() bool { return v.Level == Severe }

// Err is the error to end the turn with when Stuck, wrapping ErrStuck;
// nil otherwise.
func (v LoopVerdict) Err() error {
	if !v.Stuck() {
		return nil
	}
	return fmt.Errorf("%w: %s repeated %d times despite the loop warning", ErrStuck, strings.Join(v.Cycle, " → "), v.Times)
}

// LoopDetector watches the tool calls of a session for loops:
//
//   - the same (tool, input, output) LoopWarnAt times in a row → Warning
//     with a `[LOOP_DETECTED: …]` note for the model, again at each further
//     repetition; LoopStuckAfter more calls despite the warning → Severe
//     (stuck, end the turn);
//   - the same for cycles of period 2 and 3 (read, refused edit, read,
//     refused edit…): a cycle repeated LoopWarnAt times is warned;
//   - a failed call on a file is keyed by tool, path and the kind of error,
//     not by its exact input and output: a model that retries a refused
//     edit_file with `old` varying by a space is looping all the same;
//   - FailingFrom failures in a row → a failing struggle, nothing for the
//     model.
//
// It keeps only the hashes of the last three calls and one counter per
// period, so Record is O(1) and its memory bounded whatever the length of
// the session. The engine resets it at each user prompt (a new prompt is
// new intent), not at compaction (forgetting the conversation does not
// make a repeated command new). After a stuck verdict it stays armed:
// the next call in the same loop is warned again, and stuck three later.
// Not safe for concurrent use.
type LoopDetector struct {
	report  Report
	keys    []uint64           // hashes of the last maxPeriod calls, oldest first
	tools   []string           // their tools
	run     [maxPeriod + 1]int // run[p]: calls in a row with key[i] == key[i-p]
	n       int                // calls recorded
	warned  int                // call number of the current episode's first warning; 0 = none
	failing int                // failed calls in a row
	// refusedPath is the path of the last call when it failed on a file
	// (its key is then path + kind of error).
	refusedPath string
}

// NewLoopDetector returns a detector for one session.
func NewLoopDetector(opts LoopOptions) *LoopDetector {
	return &LoopDetector{report: opts.Report}
}

// Reset forgets every call (/new).
func (d *LoopDetector) Reset() {
	*d = LoopDetector{report: d.report}
}

// Record adds one call, in order, and says what to do. Call it for every
// call the model got an answer to — run, failed, refused by a tool or by a
// detector (unknown tool, broken arguments) — with the answer as the tool
// produced it, before any note is appended (the note counts, so it would
// make each repetition look new).
func (d *LoopDetector) Record(c ToolCall) LoopVerdict {
	d.n++
	key, path := callKey(c)
	d.refusedPath = path
	for p := 1; p <= maxPeriod; p++ {
		if len(d.keys) >= p && d.keys[len(d.keys)-p] == key {
			d.run[p]++
		} else {
			d.run[p] = 0
		}
	}
	d.keys = append(d.keys, key)
	d.tools = append(d.tools, c.Tool)
	if len(d.keys) > maxPeriod {
		d.keys = d.keys[1:]
		d.tools = d.tools[1:]
	}
	if c.IsError {
		d.failing++
	} else {
		d.failing = 0
	}

	p, times := d.loop()
	if times < LoopWarnAt {
		d.warned = 0
		if d.failing >= FailingFrom {
			d.report.report(Struggle{Warning, KindFailing, fmt.Sprintf("failing: %d tool calls in a row", d.failing)})
		}
		return LoopVerdict{}
	}
	if d.warned == 0 {
		d.warned = d.n
	}
	v := LoopVerdict{Level: Warning, Times: times, Cycle: d.cycle(p)}
	if p == 1 && d.refusedPath != "" {
		v.Path = d.refusedPath
	}
	if d.n-d.warned >= LoopStuckAfter {
		v.Level = Severe
		d.warned = d.n // stay armed: warned again, stuck three calls later
	}
	v.Note = loopNote(v)
	d.report.report(loopStruggle(v))
	return v
}

// loop finds the period p (1 to 3) whose pattern the last calls repeat
// most, and how many times the pattern came: a first copy of p calls, then
// run[p] calls each equal to the one p before. Ties go to the shortest
// period, so AAAAAA is a repetition of A, not a cycle of AA.
func (d *LoopDetector) loop() (period, times int) {
	for p := 1; p <= maxPeriod; p++ {
		if t := (d.run[p] + p) / p; t > times {
			period, times = p, t
		}
	}
	return period, times
}

func (d *LoopDetector) cycle(p int) []string {
	if p < 1 {
		p = 1
	}
	return append([]string(nil), d.tools[len(d.tools)-p:]...)
}

func loopNote(v LoopVerdict) string {
	what := fmt.Sprintf("you called %s %d times with the same input and got the same result", v.Cycle[0], v.Times)
	if v.Path != "" {
		what = fmt.Sprintf("your %s calls on %s failed %d times in a row with the same error", v.Cycle[0], clip(v.Path, 80), v.Times)
	}
	if len(v.Cycle) > 1 {
		what = fmt.Sprintf("you repeated the same %s calls %d times with the same results", strings.Join(v.Cycle, " → "), v.Times)
	}
	if v.Stuck() {
		return "[LOOP_DETECTED: " + what + " after being warned. The turn is stopped.]"
	}
	return "[LOOP_DETECTED: " + what + ". Repeating it will not change anything: try a different approach.]"
}

func loopStruggle(v LoopVerdict) Struggle {
	what := fmt.Sprintf("%s ×%d", strings.Join(v.Cycle, " → "), v.Times)
	if v.Stuck() {
		return Struggle{Severe, KindStuck, "stuck: " + what + " despite the warning — turn stopped"}
	}
	return Struggle{Warning, KindLoop, "loop: " + what + " — the model was told to change approach"}
}

// callKey hashes what makes two calls "the same". Input is compacted so
// that spacing does not matter. A failed call on a file is keyed by tool,
// path and the kind of error instead: the model varies its input (old text
// off by a space) and the error quotes it, but the refusal is the same.
func callKey(c ToolCall) (key uint64, refusedPath string) {
	h := fnv.New64a()
	h.Write([]byte(c.Tool))
	h.Write([]byte{0})
	if path := argPath(c.Input); c.IsError && path != "" {
		h.Write([]byte("refused\x00"))
		h.Write([]byte(path))
		h.Write([]byte{0})
		h.Write([]byte(errorKind(c.Output)))
		return h.Sum64(), path
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(c.Input)) == nil {
		h.Write(buf.Bytes())
	} else {
		h.Write([]byte(c.Input))
	}
	h.Write([]byte{0})
	h.Write([]byte(durations().ReplaceAllString(c.Output, "#s")))
	return h.Sum64(), ""
}

// durations match the times a tool reports ("[exit code: 1 · 0.3s]",
// "took 12ms"): they vary between identical runs (more so on a loaded
// machine), so they must not make a repetition look new.
var durations = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ms|s)\b`) })

// argPath is the "path" (or "file_path") argument of a call, or "".
func argPath(input string) string {
	var a struct {
		Path     string `json:"path"`
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal([]byte(input), &a) != nil {
		return ""
	}
	if a.Path != "" {
		return a.Path
	}
	return a.FilePath
}

// errorKind reduces an error text to its kind: the first non-empty line,
// without what it quotes ("…", `…`) and with digits folded, so that
// "old text not found in x.go (nearest: lines 12-14)" and the same with
// lines 13-15 are one kind.
func errorKind(out string) string {
	line := strings.TrimSpace(out)
	for l := range strings.SplitSeq(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			line = l
			break
		}
	}
	var b strings.Builder
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '`':
			quote = r
		case r >= '0' && r <= '9':
			if !strings.HasSuffix(b.String(), "#") {
				b.WriteByte('#')
			}
		default:
			b.WriteRune(r)
		}
		if b.Len() > 120 {
			break
		}
	}
	return b.String()
}
