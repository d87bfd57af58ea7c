package detect

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The fallback families of this file have no definition to follow: they
// catch what looks like a tool call in a syntax mm has no reader for —
// call-ish special tokens, tags named after a tool or a call, a JSON call
// no other family runs — so that it is held back, never shown as the
// answer, and never run on a guess: the model is told to call the tool
// properly. They are tried last, and only win when no family with a
// reader may still claim the text.

// callishWords: a special token whose name holds one of these opens or
// closes a tool call in some syntax (<|tool_call>, <|python_tag|>,
// <|/tool_call|>, <｜DSML｜toolcall>, <|channel|>, [TOOL_RESULTS]…);
// end-of-turn and role tokens (<|im_end|>, <|assistant|>) hold none.
var callishWords = []string{"tool", "function", "call", "invoke", "action", "python", "plugin",
	"recipient", "constrain", "channel", "dsml", "execute", "interpreter"}

func callish(name string) bool {
	n := strings.ToLower(name)
	for _, w := range callishWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// tagWords are the tag names models invent or borrow for a call; a tag
// named after an offered tool (or an alias of one) counts too.
var tagWords = []string{"tool_call", "tool_calls", "toolcall", "toolcalls", "tool-call", "tool_use", "tool_code",
	"tool", "tools", "function", "functions", "function_call", "function_calls", "functioncall", "function-call",
	"function-name", "function_name", "tool_name", "tool-name", "invoke", "call", "calls", "action", "api_call"}

// tagWord reports whether a tag of this name may be a call: one of
// tagWords or a tool's name, with or without a namespace (seed:tool_call).
func tagWord(name string, ts *Toolset) bool {
	for _, n := range []string{name, name[strings.LastIndexByte(name, ':')+1:]} {
		if oneOf(strings.ToLower(n), tagWords) || ts.Known(n) {
			return true
		}
	}
	return false
}

const maxTokenLen = 64 // bytes of a special token's name

// probeSpecial decides on a special token: <|name|>, <|name>, <｜name｜>,
// <name|>, [NAME]. One whose name is call-ish is markup, unless prose
// follows it ("models write [TOOL_CALLS] before the list"); any other is
// text. A token cut by the end of the stream counts as written.
func probeSpecial(open, rest string, _ *Toolset, final bool) int {
	var body, after string
	switch open {
	case "[":
		n := 0
		for n < len(rest) && (rest[n] >= 'A' && rest[n] <= 'Z' || rest[n] == '_' || n > 0 && rest[n] >= '0' && rest[n] <= '9') {
			n++
		}
		switch {
		case n == len(rest) && n <= maxTokenLen && !final:
			return wait
		case n == 0 || n > maxTokenLen || n == len(rest) || rest[n] != ']':
			return reject
		}
		body, after = rest[:n], rest[n+1:]
	case "<":
		n := nameLen(rest)
		switch {
		case n == len(rest) && n <= maxTokenLen && !final:
			return wait
		case n == 0 || n > maxTokenLen || n == len(rest) || rest[n] != '|':
			return reject
		case n+1 == len(rest):
			return waitOrReject(final)
		case rest[n+1] != '>':
			return reject
		}
		body, after = rest[:n], rest[n+2:]
	default: // <| or <｜
		k := strings.IndexByte(rest, '>')
		if k < 0 {
			if len(rest) > maxTokenLen || strings.ContainsAny(rest, " \t\r\n") {
				return reject
			}
			if !final {
				return wait
			}
			if callish(rest) {
				return commit // cut by the end of the stream
			}
			return reject
		}
		body, after = rest[:k], rest[k+1:]
		if body == "" || strings.ContainsAny(body, " \t\r\n") {
			return reject
		}
	}
	if !callish(body) {
		return reject
	}
	return proseAfter(after, final)
}

// proseAfter decides on markup by what follows it on its line: a space
// then a word, or punctuation that ends a clause, is prose (reject);
// anything else — nothing, a newline, a value, more markup — is markup
// (commit).
func proseAfter(after string, final bool) int {
	if after == "" {
		if final {
			return commit
		}
		return wait
	}
	c := after[0]
	switch {
	case c == ' ' || c == '\t':
		t := strings.TrimLeft(after, " \t")
		switch {
		case t == "":
			return waitOrReject(final)
		case isWordStart(t[0]):
			return reject
		}
	case strings.IndexByte(".,;:!?)\"'`*", c) >= 0:
		switch {
		case len(after) == 1:
			return waitOrReject(final)
		case strings.IndexByte(" \t\r\n\"'", after[1]) >= 0:
			return reject
		}
	}
	return commit
}

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '`' || c == '"' || c == '\'' || c == '(' || c >= 0x80
}

// markupEnd: markup no reader knows has no known end; it is held to the
// end of the stream (or to the call size limit), then noted.
func markupEnd(s string, final bool) int {
	if final {
		return len(s)
	}
	return -1
}

func parseUnknown(string, *Toolset) ([]Call, string) {
	return nil, "mm reads no call in this markup"
}

// probeTag decides on a tag named after a tool or a call (<read_file>,
// <tool_use>, <function-name>, <invoke name=…>): markup when its closing
// tag follows, when it names its target in an attribute, or when it opens
// a block the stream ends inside; text when prose follows it on its line
// ("the <bash> tool runs…").
func probeTag(_, rest string, ts *Toolset, final bool) int {
	r, closing := strings.CutPrefix(rest, "/")
	n := tagNameLen(r)
	switch {
	case r == "":
		return waitOrReject(final)
	case n == 0 || n > maxTokenLen:
		return reject
	case n == len(r):
		if final && tagWord(r, ts) {
			return commit // cut by the end of the stream
		}
		if final {
			return reject
		}
		return wait
	}
	name, after := r[:n], r[n:]
	if !tagWord(name, ts) || strings.IndexByte(">/= \t\r\n", after[0]) < 0 {
		return reject
	}
	gt := strings.IndexByte(after, '>')
	if gt < 0 {
		switch {
		case len(after) > maxHeader:
			return reject
		case final:
			return commit
		}
		return wait
	}
	attrs, content := after[:gt], after[gt+1:]
	if closing || strings.HasSuffix(attrs, "/") {
		return proseAfter(content, final) // a stray closing tag, a self-closing one
	}
	// The closing tag can only have come with the last byte: earlier, it
	// would have been decided then.
	if isName(attr(attrs, "name")) && attr(attrs, "name") != "" || strings.HasSuffix(content, "</"+name+">") {
		return commit
	}
	line, _, nl := strings.Cut(content, "\n")
	t := strings.TrimSpace(line)
	switch {
	case t == "" && !nl:
		return waitOrReject(final) // nothing after the tag yet
	case t == "" || t[0] == '{' || t[0] == '[' || line[0] == '<':
		// A block that starts on the next line, or a value: markup when
		// its closing tag comes, or when the stream ends inside it.
		if final && strings.TrimSpace(content) != "" {
			return commit
		}
		return waitOrReject(final)
	case line[0] == ' ' || line[0] == '\t' || nl || len(line) > maxTagLine:
		return reject // prose follows the tag on its line
	}
	return waitOrReject(final) // its content on its line, the closing tag awaited
}

// maxTagLine bounds a tag's content on its own line, closing tag awaited.
const maxTagLine = 200

func tagNameLen(s string) int {
	n := 0
	for n < len(s) && (isName(s[n:n+1]) || s[n] == ':') {
		n++
	}
	return n
}

// attr is the value of the attribute key in a tag's attributes, "" when
// absent: key="v" or key='v', after a space.
func attr(attrs, key string) string {
	for i := 0; i < len(attrs); {
		k := strings.Index(attrs[i:], key+"=")
		if k < 0 {
			return ""
		}
		at := i + k
		i = at + len(key) + 1
		if at == 0 || strings.IndexByte(" \t\r\n", attrs[at-1]) < 0 || i >= len(attrs) {
			continue
		}
		q := attrs[i]
		if q != '"' && q != '\'' {
			v, _, _ := strings.Cut(attrs[i:], " ")
			return strings.TrimSuffix(v, "/")
		}
		v, _, _ := strings.Cut(attrs[i+1:], string(q))
		return v
	}
	return ""
}

// tagEnd ends a tag's element at its closing tag (a closing or
// self-closing tag stands alone).
func tagEnd(s string, _ bool) int {
	r, closing := strings.CutPrefix(s[1:], "/")
	name := r[:tagNameLen(r)]
	gt := strings.IndexByte(s, '>')
	if gt < 0 {
		return -1
	}
	if closing || s[gt-1] == '/' {
		return gt + 1
	}
	c := "</" + name + ">"
	if i := strings.Index(s[gt+1:], c); i >= 0 {
		return gt + 1 + i + len(c)
	}
	return -1
}

func parseTag(s string, _ *Toolset) ([]Call, string) {
	r := strings.TrimPrefix(s[1:], "/")
	return nil, fmt.Sprintf("<%s> is a tag, not a tool call: tags are never run", clip(r[:tagNameLen(r)], 40))
}

// jsonLineKeys: a JSON object starting a line with one of these keys may
// be a call (Llama's {"name": …}, Command-R's "tool_name", OpenAI's
// "function" and "tool_calls").
var jsonLineKeys = []string{"name", "tool_name", "function", "tool", "tool_calls"}

// probeJSONLine: a JSON object or list starting a line, whose first key is
// a call's, that reads as calls and ends the answer. Followed by more
// text, it was an example: shown.
func probeJSONLine(open, rest string, _ *Toolset, final bool) int {
	head, cut := jsonHead(open, rest)
	i := 0
	if head[0] == '[' {
		if i = skipSpace(head, 1); i == len(head) {
			return waitForHead(cut, final)
		}
		if head[i] != '{' {
			return reject
		}
	}
	if i = skipSpace(head, i+1); i == len(head) {
		return waitForHead(cut, final)
	}
	if head[i] != '"' {
		return reject
	}
	key, n := readString([]byte(head[i:]))
	switch {
	case n < 0 && (len(head)-i > 40 || cut):
		return reject
	case n < 0:
		return waitOrReject(final)
	case !oneOf(key, jsonLineKeys):
		return reject
	}
	if !final && !mayHaveClosed(rest) {
		return wait
	}
	h := open + rest
	for from := 0; ; {
		j := jsonEnd(h, from)
		if j < 0 {
			if final && from == 0 {
				return commit // a call cut off: unfinished
			}
			return waitOrReject(final)
		}
		if !readsAsCalls(h[from:j]) {
			return reject
		}
		k := skipSpace(h, j)
		switch {
		case k == len(h):
			if final {
				return commit
			}
			return wait
		case h[k] == '{' || h[k] == '[':
			from = k // another call
		default:
			return reject // prose follows: an example
		}
	}
}

// jsonHead is the start of a JSON value, enough to read its first key;
// cut: there is more. Probes read the head at every byte, the whole
// value only where it may have closed, so that holding a long value
// stays linear.
func jsonHead(open, rest string) (head string, cut bool) {
	const n = 96
	if len(rest) > n {
		return open + rest[:n], true
	}
	return open + rest, false
}

// waitForHead: the head is all whitespace so far.
func waitForHead(cut, final bool) int {
	if cut {
		return reject
	}
	return waitOrReject(final)
}

// mayHaveClosed reports whether a JSON value in h may just have closed:
// h ends, whitespace aside, with a closing bracket, or with one byte after
// one. Elsewhere the decision cannot change (the value is open, or what
// followed it was decided at its first byte), so probes look for the end
// only there, and stay linear.
func mayHaveClosed(h string) bool {
	t := strings.TrimRight(h, " \t\r\n")
	closed := func(t string) bool { return strings.HasSuffix(t, "}") || strings.HasSuffix(t, "]") }
	return closed(t) || t != "" && closed(strings.TrimRight(t[:len(t)-1], " \t\r\n"))
}

func waitOrReject(final bool) int {
	if final {
		return reject
	}
	return wait
}

// readsAsCalls: a JSON value whose every item names a tool and gives it
// arguments, and says nothing else, in any of the shapes jsonCalls reads.
func readsAsCalls(s string) bool {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return false
	}
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	items = expandToolCalls(items)
	if len(items) == 0 {
		return false
	}
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		if f, ok := m["function"].(map[string]any); ok {
			m = f
		}
		name := ""
		args := false
		for k, x := range m {
			switch {
			case oneOf(k, nameKeys):
				name, _ = x.(string)
			case oneOf(k, argKeys):
				_, obj := x.(map[string]any)
				_, str := x.(string)
				args = obj || str
			case k != "type" && k != "id" && k != "tool_call_id":
				return false // a tool's definition, or data
			}
		}
		if name == "" || !args {
			return false
		}
	}
	return true
}

// expandToolCalls replaces an OpenAI message ({"tool_calls": […]}) by the
// calls it holds.
func expandToolCalls(items []any) []any {
	var out []any
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			if list, ok := m["tool_calls"].([]any); ok {
				out = append(out, list...)
				continue
			}
		}
		out = append(out, it)
	}
	return out
}
