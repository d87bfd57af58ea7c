package detect

import (
	"encoding/json"
	"strings"
)

// The probes and readers of the families that follow a definition of
// their own but share no marker with the older ones: harmony with its
// tokens stripped, Command-R, DeepSeek-V4's attributes, GLM-4.5's message
// JSON, ReAct, Python lists of calls. Each cites its definition in its
// corpus file (testdata/textcalls).

// probeMessageJSON: GLM-4.5 (llama.cpp's GLM support, ggml-org/llama.cpp
// pull 15186) answers with an OpenAI assistant message as JSON:
// {"tool_calls": [{"name": …, "arguments": {…}}]}, sometimes with its
// "role" and "content" first.
func probeMessageJSON(open, rest string, _ *Toolset, final bool) int {
	head, cut := jsonHead(open, rest)
	i := skipSpace(head, 1)
	if i == len(head) {
		return waitForHead(cut, final)
	}
	if head[i] != '"' {
		return reject
	}
	key, n := readString([]byte(head[i:]))
	switch {
	case n < 0 && (len(head)-i > 20 || cut):
		return reject
	case n < 0:
		return waitOrReject(final)
	case key == "tool_calls":
		k := skipSpace(head, i+n)
		if k < len(head) && head[k] == ':' {
			k = skipSpace(head, k+1)
		}
		switch {
		case k == len(head):
			return waitForHead(cut, final)
		case head[k] == '[':
			return commit
		}
		return reject
	case key != "role" && key != "content":
		return reject
	}
	if !final && !strings.HasSuffix(rest, "}") {
		return wait // the object is open: decided when it closes
	}
	h := open + rest
	j := jsonEnd(h, 0)
	if j < 0 {
		return waitOrReject(final)
	}
	var m struct {
		Role      string            `json:"role"`
		ToolCalls []json.RawMessage `json:"tool_calls"`
	}
	if json.Unmarshal([]byte(h[:j]), &m) != nil || len(m.ToolCalls) == 0 || m.Role != "" && m.Role != "assistant" {
		return reject
	}
	return commit
}

// probeReAct: the ReAct prompt's "Action: name" line (LangChain's
// hwchase17/react prompt: Thought / Action / Action Input / Observation),
// followed by "Action Input:".
func probeReAct(_, rest string, _ *Toolset, final bool) int {
	line, after, nl := strings.Cut(rest, "\n")
	name := strings.Trim(strings.TrimSpace(line), "`\"'")
	switch {
	case len(line) > maxTagSlack || !isName(name):
		return reject
	case !nl:
		return waitOrReject(final)
	case name == "":
		return reject
	}
	t := strings.TrimLeft(after, " \t")
	switch {
	case strings.HasPrefix(t, "Action Input:"):
		return commit
	case isPrefixOf(t, "Action Input:"):
		return waitOrReject(final)
	}
	return reject
}

// reactEnd: the Action Input is a JSON object, or the rest of its line.
func reactEnd(s string, final bool) int {
	k := strings.Index(s, "Action Input:")
	if k < 0 {
		return -1
	}
	i := k + len("Action Input:")
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	if i < len(s) && s[i] == '{' {
		return closeAfter(s, jsonEnd(s, i), final)
	}
	if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 {
		return i + nl
	}
	if final {
		return len(s)
	}
	return -1
}

func parseReAct(s string, _ *Toolset) ([]Call, string) {
	line, _, _ := strings.Cut(strings.TrimPrefix(s, "Action:"), "\n")
	name := strings.Trim(strings.TrimSpace(line), "`\"'")
	_, input, _ := strings.Cut(s, "Action Input:")
	input = strings.TrimSpace(input)
	if j := jsonEnd(input, 0); j > 0 {
		input = input[:j]
	}
	args := argsObject(json.RawMessage(input))
	if args == nil {
		return nil, "the Action Input is not a JSON object of named arguments"
	}
	return one(name, args), ""
}

// probeStrippedAnalysis: "analysis" glued to its first word, then the
// call's header; an answer ("assistantfinal") is left to flow as text.
func probeStrippedAnalysis(_, rest string, ts *Toolset, final bool) int {
	const call = "assistantcommentary to=functions."
	switch {
	case rest == "":
		return waitOrReject(final)
	case rest[0] < 'A' || rest[0] > 'Z':
		return reject // "analysis of…": prose
	case strings.Contains(rest, "assistantfinal"):
		return reject
	}
	if i := strings.Index(rest, call); i >= 0 {
		return probeHarmony(call, rest[i+len(call):], ts, final)
	}
	return waitOrReject(final)
}

// probeCommandR: <|START_ACTION|> then a JSON list; "Action:" then a
// fenced JSON list (```json or ```) that ends the answer.
func probeCommandR(open, rest string, _ *Toolset, final bool) int {
	if open == startAction {
		return either(startsWithAfterSpace(rest, "["), startsWithAfterSpace(rest, "{"))
	}
	t := strings.TrimLeft(rest, " \t\r\n")
	switch {
	case len(rest)-len(t) > maxTagSlack:
		return reject
	case t == "" || isPrefixOf(t, fence):
		return waitOrReject(final)
	case !strings.HasPrefix(t, fence):
		return reject
	}
	info, body, nl := strings.Cut(t[len(fence):], "\n")
	switch info = strings.TrimSpace(info); {
	case !nl && (info == "" || isPrefixOf(info, "json") || info == "json"):
		return waitOrReject(final)
	case info != "" && info != "json":
		return reject
	}
	return either(probeFenced(body, "[", final), probeFenced(body, "{", final))
}

// commandREnd ends the JSON list and the marker or fence closing it.
func commandREnd(s string, final bool) int {
	if strings.HasPrefix(s, startAction) {
		return closeAfter(s, jsonEnd(s, skipSpace(s, len(startAction))), final, endAction)
	}
	i := strings.Index(s, fence)
	if i < 0 {
		return -1
	}
	nl := strings.IndexByte(s[i:], '\n')
	if nl < 0 {
		return -1
	}
	return closeAfter(s, jsonEnd(s, skipSpace(s, i+nl)), final, fence)
}

// commandRBody is the JSON list of a Command-R call.
func commandRBody(s string) string {
	if b, ok := strings.CutPrefix(s, startAction); ok {
		return b
	}
	i := strings.Index(s, fence)
	if i < 0 {
		return s
	}
	_, b, _ := strings.Cut(s[i:], "\n")
	return b
}

// probeAttrCall: <tool_call, attributes naming the tool, >.
func probeAttrCall(_, rest string, _ *Toolset, final bool) int {
	gt := strings.IndexByte(rest, '>')
	if gt < 0 {
		if len(rest) > maxHeader {
			return reject
		}
		return waitOrReject(final)
	}
	if name := attr(" "+rest[:gt], "name"); name != "" && isName(name) {
		return commit
	}
	return reject
}

// attrCallEnd: the JSON object after the tag, then </tool_call>.
func attrCallEnd(s string, final bool) int {
	gt := strings.IndexByte(s, '>')
	if gt < 0 {
		return -1
	}
	if j := skipSpace(s, gt+1); j < len(s) && s[j] == '{' {
		return closeAfter(s, jsonEnd(s, j), final, tagToolEnd)
	}
	if k := indexOutsideStrings(s[gt:], tagToolEnd); k >= 0 {
		return gt + k + len(tagToolEnd)
	}
	return -1
}

func parseAttrCall(s string, _ *Toolset) ([]Call, string) {
	head, body, _ := strings.Cut(s, ">")
	name := attr(head, "name")
	body, _, _ = strings.Cut(body, tagToolEnd)
	body = strings.TrimSpace(body)
	switch {
	case body == "":
		return nil, "the call has no arguments object"
	case body[0] == '{' && jsonEnd(body, 0) < 0:
		return nil, "the call is unfinished"
	}
	args := argsObject(json.RawMessage(body))
	if args == nil {
		return nil, "the arguments are not a JSON object"
	}
	return one(name, args), ""
}

// probePythonic: "[", a name and "(": then the list must close the
// answer.
func probePythonic(_, rest string, _ *Toolset, final bool) int {
	t := strings.TrimLeft(rest, " \t\r\n")
	if t == "" {
		return waitOrReject(final)
	}
	if v := probePyCall(t); v != commit {
		if v == wait {
			return waitOrReject(final)
		}
		return v
	}
	h := "[" + rest
	if !final && !strings.HasSuffix(strings.TrimRight(h, " \t\r\n"), "]") && !mayHaveClosed(h) {
		return wait
	}
	j := balancedEnd(h, 0, true, false)
	switch {
	case j < 0:
		if final {
			return commit // cut off: noted as unfinished
		}
		return wait
	case strings.TrimSpace(h[j:]) != "":
		return reject // text follows: not a call
	case final:
		return commit
	}
	return wait
}

// callLines are how the first line of a call in a fence begins, in the
// syntaxes of the table (JSON ones without their spaces).
var callLines = []string{"<tool_call", "<function", "<|", "<｜", "[TOOL_CALLS]", "[TOOL_REQUEST]",
	`{"name"`, `{"tool_name"`, `{"function"`, `{"tool_calls"`, `[{"name"`, `[{"tool_name"`,
	"Action:", "<invoke", "<seed:tool_call>", "<minimax:tool_call>", "functools[", "to=functions.", "commentary to=functions."}

// probeFencedCall: a fence whose first line opens a call, closed, then
// the end of the answer. A fence cut by the end of the stream is a call
// cut off.
func probeFencedCall(_, rest string, ts *Toolset, final bool) int {
	info, body, nl := strings.Cut(rest, "\n")
	if len(info) > 20 || strings.ContainsAny(strings.TrimSpace(info), " \t") {
		return reject
	}
	if !nl {
		return waitOrReject(final)
	}
	line, _, full := strings.Cut(strings.TrimLeft(body, " \t\r\n"), "\n")
	t := strings.ReplaceAll(strings.TrimSpace(line), " ", "")
	started := false
	for _, p := range append(callLines, tagOpeners(ts)...) {
		if strings.HasPrefix(t, p) {
			started = true
			break
		}
		if isPrefixOf(t, p) && !full {
			return waitOrReject(final)
		}
	}
	if !started {
		if t == "" && !full {
			return waitOrReject(final)
		}
		return reject
	}
	k := strings.Index(body, "\n"+fence)
	if k < 0 {
		if final {
			return commit // cut off inside the fence
		}
		return wait
	}
	if c := strings.TrimSpace(body[:k]); c != "" && (c[0] == '{' || c[0] == '[') && !readsAsCalls(c) {
		return reject // JSON data, not calls
	}
	return fenceThenEnd(body[k+1:], final)
}

// tagOpeners are the tags named after the offered tools.
func tagOpeners(ts *Toolset) []string {
	var out []string
	for _, n := range ts.Names() {
		out = append(out, "<"+n+">", "<"+n+" ")
	}
	return out
}

// fencedCalls reads a fence's content as an answer of its own.
func fencedCalls(s string, ts *Toolset) ([]Call, string) {
	_, body, _ := strings.Cut(s, "\n")
	body = strings.TrimSuffix(strings.TrimRight(body, " \t\r\n"), fence)
	d := NewTextCallDetector(ts, TextCallOptions{})
	_, c := d.Write(body)
	if c == nil {
		_, c = d.Flush()
	}
	switch {
	case c == nil:
		return nil, "no call could be read in the fence"
	case c.Problem != "":
		return nil, c.Problem
	case !c.Whole:
		return nil, "there was text before the call in the fence"
	}
	return c.Calls, ""
}
