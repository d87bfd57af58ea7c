package detect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// ArgsStatus classifies the raw arguments of a tool call.
type ArgsStatus int

const (
	// ArgsValid: one JSON object (or nothing at all: a tool without
	// parameters may get empty arguments).
	ArgsValid ArgsStatus = iota
	// ArgsTruncated: a valid beginning of JSON that stops early — the
	// server cut the generation, typically at max_tokens, mid-call.
	ArgsTruncated
	// ArgsMalformed: anything else (a syntax error, two objects glued
	// together, a bare string).
	ArgsMalformed
)

func (s ArgsStatus) String() string {
	switch s {
	case ArgsValid:
		return "valid"
	case ArgsTruncated:
		return "truncated"
	case ArgsMalformed:
		return "malformed"
	}
	return fmt.Sprintf("ArgsStatus(%d)", int(s))
}

// ArgsCheck is the verdict on raw arguments.
type ArgsCheck struct {
	Status ArgsStatus
	// Args is the object to run the call with when Status is ArgsValid:
	// "{}" for empty arguments, the object inside for arguments that a
	// model double-encoded as a JSON string, else the input.
	Args json.RawMessage
	// Problem says what is wrong, in words for the model ("" when valid).
	Problem string
}

// CheckArgs classifies raw tool-call arguments. Truncation is told apart
// from malformation by encoding/json itself: a decoder that runs out of
// input inside a value returns io.ErrUnexpectedEOF ("unexpected end of
// JSON input"), a syntax error anywhere else is a *json.SyntaxError.
func CheckArgs(raw string) ArgsCheck {
	if strings.TrimSpace(raw) == "" {
		return ArgsCheck{Status: ArgsValid, Args: json.RawMessage("{}")}
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	var v json.RawMessage
	err := dec.Decode(&v)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ArgsCheck{Status: ArgsTruncated, Problem: "the JSON stops before its end"}
	case err != nil:
		return ArgsCheck{Status: ArgsMalformed, Problem: syntaxProblem(raw, err)}
	}
	if rest := strings.TrimSpace(raw[dec.InputOffset():]); rest != "" {
		return ArgsCheck{Status: ArgsMalformed, Problem: "there is text after the JSON object: " + fmt.Sprintf("%q", clip(rest, 30))}
	}
	v = bytes.TrimSpace(v)
	if v[0] == '"' { // double-encoded: "{\"command\":\"ls\"}"
		var inner string
		if json.Unmarshal(v, &inner) == nil && json.Valid([]byte(inner)) && strings.HasPrefix(strings.TrimSpace(inner), "{") {
			return ArgsCheck{Status: ArgsValid, Args: json.RawMessage(strings.TrimSpace(inner))}
		}
	}
	if v[0] != '{' {
		return ArgsCheck{Status: ArgsMalformed, Problem: "the arguments must be one JSON object {…}, not " + jsonKindOf(v[0])}
	}
	return ArgsCheck{Status: ArgsValid, Args: v}
}

func syntaxProblem(raw string, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		at := int(se.Offset)
		from := max(0, at-20)
		to := min(len(raw), at+10)
		return "invalid JSON here: " + oneLine(raw[from:to])
	}
	return "invalid JSON"
}

func jsonKindOf(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// CharBudget is how many characters of content a model should put in one
// tool call with this max_tokens, as quoted in the truncation note.
//
// Measured (26/09/2026, a small local model): a 12,500-character write_file
// was ≈ 4,000 tokens, so ≈ 3 characters per token; the same budget also
// pays for reasoning on thinking models and for JSON escaping. Half of it,
// 1.5 characters per token, rounded down to a round number, gives
// ≈ 6,000 characters for 4,096 tokens. 0 when max_tokens is
// unknown.
func CharBudget(maxTokens int) int {
	if maxTokens <= 0 {
		return 0
	}
	b := maxTokens * 3 / 2
	switch {
	case b >= 2000:
		return b / 500 * 500
	case b >= 100:
		return b / 100 * 100
	}
	return b
}

// Default retry limits for broken calls: enough for a model to correct
// itself, few enough that a turn does not spin on it. The engine counts
// with a Retries.
const (
	// MaxBrokenCallRetries: a call with invalid JSON arguments is given
	// back at most twice per generation; then one Explain line.
	MaxBrokenCallRetries = 2
	// MaxTextCallRetries: a tool call written as text is retried with a
	// corrective note at most 3 times in a row; a real tool call in
	// between resets the count.
	MaxTextCallRetries = 3
)

// Retries counts the tries of one retry policy. The zero value allows
// none; set Max.
type Retries struct {
	Max  int
	used int
}

// Take uses one try and reports whether it was still allowed.
func (r *Retries) Take() bool {
	if r.used >= r.Max {
		return false
	}
	r.used++
	return true
}

// Used is the number of tries taken.
func (r *Retries) Used() int { return r.used }

// Reset gives all the tries back (a new generation for broken calls, a
// call made through the protocol for calls written as text).
func (r *Retries) Reset() { r.used = 0 }

// BrokenCall is a tool call whose arguments are not valid JSON. It
// is never run: the model gets Note (at most MaxBrokenCallRetries times per
// generation), then the user gets Explain.
type BrokenCall struct {
	Tool  string
	Check ArgsCheck
	// MaxTokens is the max_tokens of the request (0 if unknown), for the
	// character budget of a truncated call.
	MaxTokens int
	// FollowUp is the tool to add the rest with after a truncated call;
	// "" means edit_file.
	FollowUp string
}

// Note is the model-facing repair instruction.
func (b BrokenCall) Note() string {
	if b.Check.Status == ArgsTruncated {
		follow := b.FollowUp
		if follow == "" {
			follow = "edit_file"
		}
		budget := ""
		if n := CharBudget(b.MaxTokens); n > 0 {
			budget = fmt.Sprintf(" (≈ %s characters at most for %s tokens)", thousands(n), thousands(b.MaxTokens))
		}
		return fmt.Sprintf("[error: your %s call was cut off at max_tokens before its arguments were complete, so it did not run. "+
			"Write only the first part%s in one call, then add the rest with %s.]", b.Tool, budget, follow)
	}
	return fmt.Sprintf("[error: the arguments of your %s call are not valid JSON (%s), so it did not run. "+
		"Call %s again with one JSON object.]", b.Tool, b.Check.Problem, b.Tool)
}

// Explain is the one line for the user once the retries are spent,
// instead of a dump of the broken JSON.
func (b BrokenCall) Explain() string {
	if b.Check.Status == ArgsTruncated {
		mt := "max_tokens"
		if b.MaxTokens > 0 {
			mt = fmt.Sprintf("max_tokens (%d)", b.MaxTokens)
		}
		return fmt.Sprintf("the model hit %s while writing a %s call, again after being told to write less — "+
			"raise sampling.max_tokens (16384 suits a thinking model) or ask for the work in smaller steps", mt, b.Tool)
	}
	return fmt.Sprintf("the model kept sending %s arguments that are not valid JSON — "+
		"check that the server applies the model's chat template for tools (llama-server --jinja) or try another model", b.Tool)
}

// Struggle is shown each time a broken call is given back (a warning),
// and once more, severe, when the retries are spent and the turn ends with
// Explain (gaveUp).
func (b BrokenCall) Struggle(gaveUp bool) Struggle {
	what := "malformed"
	if b.Check.Status == ArgsTruncated {
		what = "cut off at max_tokens"
	}
	if gaveUp {
		return Struggle{Severe, KindBrokenCall, fmt.Sprintf("broken call: %s arguments %s again — turn stopped", b.Tool, what)}
	}
	return Struggle{Warning, KindBrokenCall, fmt.Sprintf("broken call: %s arguments %s — given back to the model", b.Tool, what)}
}
