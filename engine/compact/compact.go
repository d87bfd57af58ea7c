// Package compact holds the pure parts of context budgeting:
// counting tokens the way mm estimates them, the one-line stub an old tool
// output becomes when it is masked, head-and-tail truncation, and the
// summary block a compaction leaves at the head of the conversation. The
// engine decides when to use them; nothing here does I/O.
//
// Invariants:
//   - Every function is deterministic: the same history gives the same
//     bytes, so what mm sends keeps a stable prefix between two steps.
//   - Estimates err on the high side (3.5 characters a token, plus a
//     per-message overhead): a server that counts fewer tokens costs some
//     room, one that counts more would refuse the request.
package compact

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mm-agent/mm/engine/llm"
)

// CharsPerToken is the ratio of the local estimate.
const CharsPerToken = 3.5

// messageOverhead is the tokens a chat template adds around a message
// (role markers, separators).
const messageOverhead = 6

// Tokens estimates the tokens of a text.
func Tokens(s string) int {
	if s == "" {
		return 0
	}
	return int(float64(len(s))/CharsPerToken) + 1
}

// MessageTokens estimates one message as sent: content, calls and the
// template's overhead.
func MessageTokens(m llm.Message) int {
	n := messageOverhead + Tokens(m.Content) + Tokens(m.Reasoning)
	for _, c := range m.ToolCalls {
		n += messageOverhead + Tokens(c.Name) + Tokens(c.Arguments)
	}
	return n
}

// RequestTokens estimates a whole request: messages and tool definitions
// (a template renders the schemas into the prompt).
func RequestTokens(req llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += MessageTokens(m)
	}
	for _, t := range req.Tools {
		n += messageOverhead + Tokens(t.Name) + Tokens(t.Description) + Tokens(string(t.Parameters))
	}
	return n
}

// MaxOutput is the default bound of one tool output in characters:
// 15 % of the window at CharsPerToken, clamped to [2,000, 16,000]; 16,000 when
// the window is unknown.
func MaxOutput(window int) int {
	if window <= 0 {
		return 16000
	}
	return min(max(int(float64(window)*0.15*CharsPerToken), 2000), 16000)
}

// Cap keeps the head and the tail of text within max characters, with a
// marker in the middle saying how much was cut and how to read it.
// Lines are kept whole when they are short enough. Text within max is
// returned as it is.
func Cap(text string, max int) string {
	if max <= 0 || len(text) <= max {
		return text
	}
	const markerRoom = 160
	keep := max - markerRoom
	if keep < 200 {
		keep = max / 2
	}
	head, tail := keep*2/3, keep/3
	h := text[:cutBack(text, head)]
	if i := strings.LastIndexByte(h, '\n'); i > len(h)/2 {
		h = h[:i+1]
	}
	ts := len(text) - tail
	ts = cutForward(text, ts)
	if i := strings.IndexByte(text[ts:], '\n'); i >= 0 && i < tail/2 {
		ts += i + 1
	}
	t := text[ts:]
	cut := text[len(h):ts]
	lines := strings.Count(cut, "\n")
	first := strings.Count(h, "\n") + 1
	marker := fmt.Sprintf("\n[… %s characters cut from the middle (about %d lines from line %d) — read a range (read_file with start/end) or grep for what you need …]\n",
		Thousands(len(cut)), lines, first)
	return h + marker + t
}

// cutBack moves i back to a UTF-8 character boundary.
func cutBack(s string, i int) int {
	for i > 0 && i < len(s) && s[i]&0xC0 == 0x80 {
		i--
	}
	return i
}

// cutForward moves i forward to a UTF-8 character boundary.
func cutForward(s string, i int) int {
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return i
}

// Thousands writes n with comma separators: 14,210.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

var exitCode = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[exit code: (\d+)`) })

// Stub is the one line an old tool output becomes in what is sent:
// what the call was, how big its output was, and how to get it back.
//
//	[output of read_file f01.txt elided — 212 lines; read it again if needed]
//	[output of "go test ./..." elided — 212 lines, exit 1; rerun it if needed]
func Stub(call llm.ToolCall, output string) string {
	lines := strings.Count(strings.TrimRight(output, "\n"), "\n") + 1
	what, again := call.Name, "call it again if needed"
	var args map[string]any
	_ = json.Unmarshal([]byte(call.Arguments), &args)
	if cmd, ok := args["command"].(string); ok && cmd != "" {
		what, again = strconv.Quote(clip(cmd, 80)), "rerun it if needed"
	} else if p, ok := args["path"].(string); ok && p != "" {
		what += " " + clip(p, 120)
		if strings.HasPrefix(call.Name, "read") {
			again = "read it again if needed"
		}
	} else if v := firstString(args); v != "" {
		what += " " + strconv.Quote(clip(v, 60))
	}
	size := fmt.Sprintf("%d lines", lines)
	if lines == 1 {
		size = "1 line"
	}
	if m := exitCode().FindStringSubmatch(output); m != nil {
		size += ", exit " + m[1]
	}
	return fmt.Sprintf("[output of %s elided — %s; %s]", what, size, again)
}

// Worth reports whether masking output saves anything: short outputs
// stay, a stub would be as long.
func Worth(output string) bool { return len(output) > 400 }

func firstString(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	// Deterministic: the first key in sorted order that holds a string.
	slices.Sort(keys)
	for _, k := range keys {
		if s, ok := args[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:cutBack(s, n)] + "…"
}
