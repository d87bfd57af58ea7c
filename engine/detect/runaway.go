package detect

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Default limits of the runaway-argument detector.
//
// Why these numbers. The runaway small models show is a model composing
// tool arguments that repeat "for minutes" (`"Greet 2023-06-15 11:16:00 …"`,
// a line of about 25 bytes, again and again). Such a stream is exactly
// periodic: once the model starts copying, byte i equals byte i-p for the
// pattern length p, forever. Legitimate arguments are code and prose, whose
// repetitive stretches are short: a `|---|---|` table separator, an 80-byte
// `=====` rule, indentation, a JSON-escaped `\n\t\t`. They repeat for tens
// of bytes, not hundreds.
//
//   - Window 256: the detector trips when the last 256 bytes are periodic. A
//     stream that starts repeating a pattern at byte s trips at byte s+256
//     exactly, so a runaway is caught within 256 bytes of becoming periodic
//     — about a second of decoding on a small local model — while every
//     short repetitive construct above stays under the window.
//   - Periods 4 to 64: below 4 are runs of one character or of two, which
//     are caught anyway (a string of period 1 or 2 also has period 4); above
//     64 a repeated block of code is plausible (two identical test cases), and
//     a 256-byte window holds less than four copies of it, too few to call it
//     a loop. 64 is also what the one-word bitmask below holds.
//   - MaxBytes 256 KiB: no single tool call needs more; write_file content
//     that long would not fit max_tokens anyway.
//
// Measured on the Go 1.26 standard library (each of its 7,711 .go files
// fed as JSON-escaped write_file arguments in 7-byte deltas, ≈ 100 MB): 31
// files trip (0.4 %), all of them generated tables or test vectors — runs
// of `0x00, 0x00,` or `0xff,`, `aaaa…`, `\x00\x00…`, and test tables where
// the same line comes five times in a row. Those are indistinguishable from
// that runaway (the same dated line again and again) within 256 bytes,
// and a small model writing them by hand is better told to write less.
// testdata/normal holds the realistic outputs that must never trip.
const (
	DefaultRunawayWindow    = 256
	DefaultRunawayMinPeriod = 4
	DefaultRunawayMaxPeriod = 64
	DefaultRunawayMaxBytes  = 256 << 10
)

// RunawayOptions configures a RunawayDetector; zero fields take the
// defaults above. MaxPeriod is capped at 64 and at Window/2 (a window must
// hold two copies of a pattern for it to repeat at all).
type RunawayOptions struct {
	Window    int
	MinPeriod int
	MaxPeriod int
	MaxBytes  int
}

// RunawayReason says why the detector tripped.
type RunawayReason int

const (
	RunawayPeriodic RunawayReason = iota + 1 // the last Window bytes repeat a pattern
	RunawayTooLong                           // more than MaxBytes of arguments
)

// Runaway describes a tripped detector.
type Runaway struct {
	Reason  RunawayReason
	Period  int    // the pattern length, for RunawayPeriodic
	Pattern string // the repeated bytes, for RunawayPeriodic
	Bytes   int    // argument bytes received when it tripped
}

// RunawayDetector watches the arguments of one tool call while they stream.
// Feed it every argument delta of that call; when Write returns a
// non-nil Runaway, abort the generation, do not run the call, and give the
// model Note (then report Struggle).
//
// Cost: a few bit operations per byte (a 64-bit mask of the periods whose
// streak goes on, and a check only when some streak may be old enough);
// about 10 ns per byte, no allocation after construction. A
// RunawayDetector is not safe for concurrent use.
type RunawayDetector struct {
	window, minP, maxP, maxBytes int
	periods                      uint64 // bit p-1 set for p in [minP, maxP]

	n     int         // bytes seen
	occ   [256]uint64 // occ[c]: ring slots (see slot) holding byte c
	ring  [64]byte    // the last 64 bytes, by slot
	alive uint64      // bit p-1: b[i] == b[i-p] holds since start[p-1]
	start [64]int     // where each live streak began
	due   int         // no live streak can trip before this position
	trip  *Runaway
}

// NewRunawayDetector returns a detector for one tool call.
func NewRunawayDetector(opts RunawayOptions) *RunawayDetector {
	d := &RunawayDetector{
		due:      math.MaxInt,
		window:   or(opts.Window, DefaultRunawayWindow),
		minP:     or(opts.MinPeriod, DefaultRunawayMinPeriod),
		maxP:     or(opts.MaxPeriod, DefaultRunawayMaxPeriod),
		maxBytes: or(opts.MaxBytes, DefaultRunawayMaxBytes),
	}
	d.maxP = min(d.maxP, 64, d.window/2)
	d.minP = max(d.minP, 1)
	for p := d.minP; p <= d.maxP; p++ {
		d.periods |= 1 << (p - 1)
	}
	return d
}

func or(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Write feeds the next argument delta. It returns nil while the arguments
// look sane, and the same non-nil Runaway from the moment the detector trips
// (the bytes after the tripping one are not examined).
func (d *RunawayDetector) Write(delta string) *Runaway {
	if d.trip != nil {
		return d.trip
	}
	for i := 0; i < len(delta); i++ {
		if p := d.step(delta[i]); p > 0 {
			d.trip = &Runaway{Reason: RunawayPeriodic, Period: p, Pattern: d.last(p), Bytes: d.n}
			return d.trip
		}
		if d.n > d.maxBytes {
			d.trip = &Runaway{Reason: RunawayTooLong, Bytes: d.n}
			return d.trip
		}
	}
	return nil
}

// step adds byte c at position i = d.n and returns a period that makes the
// last window bytes periodic, or 0.
//
// Positions are stored in a 64-slot ring at slot (-i)&63, so that the slot
// of position i-p is (slot(i)+p)&63: rotating occ[c] right by slot(i)+1
// turns "slots holding c" into "periods p (bit p-1) with b[i-p] == c".
func (d *RunawayDetector) step(c byte) int {
	i := d.n
	d.n++
	s := uint(-i) & 63
	eq := bits.RotateLeft64(d.occ[c], -int(s)-1) & d.periods
	if i >= 64 {
		old := d.ring[s]
		d.occ[old] &^= 1 << s
	}
	d.occ[c] |= 1 << s
	d.ring[s] = c

	for born := eq &^ d.alive; born != 0; born &= born - 1 {
		k := bits.TrailingZeros64(born)
		d.start[k] = i
		d.due = min(d.due, d.tripAt(k))
	}
	d.alive = eq
	if i < d.due {
		return 0
	}
	// Some streak may be old enough: check them all, then compute the next
	// position worth checking (streaks that died since only made due
	// early, never late).
	d.due = math.MaxInt
	for a := eq; a != 0; a &= a - 1 {
		k := bits.TrailingZeros64(a)
		at := d.tripAt(k)
		if at <= i {
			return k + 1
		}
		d.due = min(d.due, at)
	}
	return 0
}

// tripAt is the position at which the live streak of period k+1 makes the
// window periodic: a streak for p that began at start covers the window
// once i-start+1 >= window-p (the window's first p bytes are the pattern,
// the rest copies of it).
func (d *RunawayDetector) tripAt(k int) int {
	return d.start[k] + d.window - (k + 1) - 1
}

// last returns the last p bytes seen (p <= 64).
func (d *RunawayDetector) last(p int) string {
	b := make([]byte, p)
	for k := 0; k < p; k++ {
		pos := d.n - p + k
		b[k] = d.ring[uint(-pos)&63]
	}
	return string(b)
}

// Note is what the model reads instead of a result: the call did not run,
// and why, in words a 4B model can act on.
func (r *Runaway) Note(tool string) string {
	if r.Reason == RunawayTooLong {
		return fmt.Sprintf("[error: your %s call was stopped: its arguments passed %s bytes, so it did not run. "+
			"Write less in one call: the first part now, the rest with further calls.]", tool, thousands(r.Bytes))
	}
	return fmt.Sprintf("[error: your %s call was stopped: its arguments kept repeating \"%s\", so it did not run. "+
		"Write the call again without repeating yourself.]", tool, clip(strings.TrimSpace(oneLine(r.Pattern)), 64))
}

// Struggle is the warning shown to the user (the engine retries the model
// call, so the turn goes on).
func (r *Runaway) Struggle(tool string) Struggle {
	if r.Reason == RunawayTooLong {
		return Struggle{Warning, KindRunaway, fmt.Sprintf("runaway: %s arguments passed %s bytes — call stopped, model told", tool, thousands(r.Bytes))}
	}
	return Struggle{Warning, KindRunaway, fmt.Sprintf("runaway: %s arguments repeating every %d bytes — call stopped, model told", tool, r.Period)}
}
