package detect

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Several families write a call as an <invoke> element holding one
// <parameter> element per argument, the form Anthropic's models use and
// others learned:
//
//	<invoke name="read_file"><parameter name="path">notes.txt</parameter></invoke>
//
// MiniMax-M2 wraps the invokes in <minimax:tool_call>; DeepSeek-V3.2
// prefixes every tag with its ｜DSML｜ token, wraps them in
// <｜DSML｜function_calls> (DeepSeek-V4: <｜DSML｜tool_calls>) and marks
// each parameter string="true" (the value is the text) or "false" (the
// value is JSON) — its chat template, and vLLM's deepseek_v32 parser.

const (
	dsml           = "｜DSML｜"
	dsmlCalls      = "<" + dsml + "function_calls>"
	dsmlCallsV4    = "<" + dsml + "tool_calls>"
	dsmlCallsEnd   = "</" + dsml + "function_calls>"
	dsmlCallsEndV4 = "</" + dsml + "tool_calls>"
)

// dsmlEnd ends a DSML block at the closing tag of its wrapper.
func dsmlEnd(s string, _ bool) int {
	for _, c := range []string{dsmlCallsEnd, dsmlCallsEndV4, dsASCII(dsmlCallsEnd), dsASCII(dsmlCallsEndV4)} {
		if i := strings.Index(s, c); i >= 0 {
			return i + len(c)
		}
	}
	return -1
}

func parseDSML(s string, ts *Toolset) ([]Call, string) {
	return invokeCalls(strings.ReplaceAll(s, dsASCII(dsml), dsml), dsml, ts)
}

func parseMiniMax(s string, ts *Toolset) ([]Call, string) {
	body, _, _ := strings.Cut(s, "</minimax:tool_call>")
	return invokeCalls(body, "", ts)
}

// invokeCalls reads every <P invoke name="f"> … </P invoke> of s, where P
// is the tag prefix of the family ("" or ｜DSML｜).
func invokeCalls(s, prefix string, ts *Toolset) ([]Call, string) {
	var calls []Call
	for _, part := range strings.Split(s, "<"+prefix+"invoke name=")[1:] {
		name, rest, ok := strings.Cut(part, ">")
		if !ok {
			return nil, "an <invoke> is unfinished"
		}
		name = strings.Trim(strings.TrimSpace(name), `"'`)
		rest, _, closed := strings.Cut(rest, "</"+prefix+"invoke>")
		if !closed {
			return nil, "the call is unfinished: </invoke> is missing"
		}
		args := newArgObject(name, ts)
		for _, p := range strings.Split(rest, "<"+prefix+"parameter name=")[1:] {
			head, v, ok := strings.Cut(p, ">")
			if !ok {
				return nil, "a <parameter> is unfinished"
			}
			key, attrs, _ := strings.Cut(strings.TrimSpace(head), " ")
			key = strings.Trim(key, `"'`)
			if key == "" {
				return nil, "a <parameter> has no name: name every argument"
			}
			v, _, _ = strings.Cut(v, "</"+prefix+"parameter>")
			v = strings.TrimPrefix(strings.TrimSuffix(v, "\n"), "\n")
			if strings.Contains(attrs, `string="false"`) && json.Valid([]byte(strings.TrimSpace(v))) {
				args.raw(key, []byte(strings.TrimSpace(v)))
				continue
			}
			if strings.Contains(attrs, `string="true"`) {
				args.raw(key, jsonString(v))
				continue
			}
			args.typed(key, v)
		}
		calls = append(calls, Call{Name: name, Arguments: args.json()})
	}
	if len(calls) == 0 {
		return nil, "no <invoke> was read"
	}
	return calls, ""
}

// jsonString is s as a JSON string.
func jsonString(s string) []byte {
	var b bytes.Buffer
	writeJSONString(&b, s)
	return b.Bytes()
}
