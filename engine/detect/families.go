package detect

import (
	"encoding/json"
	"strings"
)

// family is one syntax in which models write tool calls as text when the
// server does not turn them into real calls: its opening markers,
// where they may stand, and three small functions. The detector does the
// streaming; a family only says what its text looks like.
type family struct {
	format TextCallFormat
	title  string // the syntax, as the notes name it
	opens  []string
	// whole: counts only when nothing but whitespace came before (a
	// syntax with no marker of its own); bol: the opener starts a line;
	// fallback: a family with no reader (markup.go), which commits only
	// when no family with one may still claim the text.
	whole, bol, fallback bool
	// probe decides on what follows an opener while it streams: wait for
	// more, reject (it is text), or commit (it is a call; hold it all).
	// final: the stream ended.
	probe func(open, rest string, ts *Toolset, final bool) int
	// end is the length of the complete call at the start of seg (which
	// starts with an opener), closing markers included; -1 while it is
	// not complete. final: the stream ended, so a missing closing marker
	// is no longer awaited.
	end func(seg string, final bool) int
	// parse reads the calls of one complete segment; problem says why
	// they cannot run.
	parse func(seg string, ts *Toolset) (calls []Call, problem string)
	// inner: the segment wraps an answer of its own (a fence), whose
	// content the detector reads again, with every family (fencedCalls).
	inner bool
	// fix is what to change on the server so that this syntax comes back
	// as real tool calls.
	fix string
}

// Probe verdicts.
const (
	wait = iota
	reject
	commit
)

const (
	maxTagSlack = 64 // whitespace or name bytes tolerated after an opener
	maxHeader   = 1024
)

// The special tokens of the families that have them, written once.
const (
	tagToolCall   = "<tool_call>"
	tagToolEnd    = "</tool_call>"
	tagFunction   = "<function="
	tagFuncEnd    = "</function>"
	tagParameter  = "<parameter="
	tagParamEnd   = "</parameter>"
	dsCallsBegin  = "<｜tool▁calls▁begin｜>"
	dsCallsEnd    = "<｜tool▁calls▁end｜>"
	dsCallBegin   = "<｜tool▁call▁begin｜>"
	dsCallEnd     = "<｜tool▁call▁end｜>"
	dsSep         = "<｜tool▁sep｜>"
	kimiSection   = "<|tool_calls_section_begin|>"
	kimiSectEnd   = "<|tool_calls_section_end|>"
	kimiCallBegin = "<|tool_call_begin|>"
	kimiCallEnd   = "<|tool_call_end|>"
	kimiArgs      = "<|tool_call_argument_begin|>"
	seedToolCall  = "<seed:tool_call>"
	seedToolEnd   = "</seed:tool_call>"
	startAction   = "<|START_ACTION|>"
	endAction     = "<|END_ACTION|>"
	fence         = "```"
)

// families is the table, in the order a shared opener is tried.
var families = []*family{
	{
		format: "hermes", title: "Hermes <tool_call>{…}</tool_call>",
		opens: []string{tagToolCall},
		probe: func(_, rest string, _ *Toolset, _ bool) int {
			return either(startsWithAfterSpace(rest, "{"), startsWithAfterSpace(rest, "["))
		},
		end: func(s string, final bool) int {
			if j := jsonEnd(s, skipSpace(s, len(tagToolCall))); j >= 0 {
				return closeAfter(s, j, final, tagToolEnd)
			}
			// Broken JSON still ends at its closing tag, when the tag is
			// not inside one of its strings.
			if k := indexOutsideStrings(s, tagToolEnd); k >= 0 {
				return k + len(tagToolEnd)
			}
			return -1
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s[len(tagToolCall):], false) },
		fix:   "llama-server: add --jinja; vLLM: --enable-auto-tool-choice --tool-call-parser hermes; Ollama/LM Studio: a model whose template declares tools",
	},
	{
		// Seed-OSS wraps the same function in <seed:tool_call> (its chat
		// template, llama.cpp's ByteDance-Seed-OSS.jinja).
		format: "qwen_xml", title: "Qwen3-Coder <function=…><parameter=…>",
		opens: []string{tagToolCall, seedToolCall, tagFunction},
		probe: probeQwen,
		end: func(s string, final bool) int {
			if i := strings.Index(s, tagFuncEnd); i >= 0 {
				return closeAfter(s, i+len(tagFuncEnd), final, tagToolEnd, seedToolEnd)
			}
			for _, c := range []string{tagToolEnd, seedToolEnd} {
				if i := strings.Index(s, c); i >= 0 {
					return i + len(c)
				}
			}
			return -1
		},
		parse: func(s string, ts *Toolset) ([]Call, string) {
			name, args, problem := parseQwen(s, ts, true)
			return one(name, args), problem
		},
		fix: "llama-server: add --jinja (a recent build parses Qwen3-Coder's XML); vLLM: --tool-call-parser qwen3_coder",
	},
	{
		format: "glm", title: "GLM-4.5 <tool_call>name<arg_key>…</arg_key><arg_value>…</arg_value>",
		opens: []string{tagToolCall},
		probe: probeGLM,
		end:   markerEnd("</tool_call>"),
		parse: parseGLM,
		fix:   "llama-server: add --jinja; vLLM: --tool-call-parser glm45",
	},
	{
		format: "mistral", title: "Mistral [TOOL_CALLS]",
		opens: []string{"[TOOL_CALLS]"},
		probe: probeMistral,
		end: func(s string, final bool) int {
			i := skipSpace(s, len("[TOOL_CALLS]"))
			if i < len(s) && s[i] != '[' {
				k := strings.IndexByte(s[i:], '{')
				if k < 0 {
					return -1
				}
				i += k
			}
			return closeAfter(s, jsonEnd(s, i), final, "</s>")
		},
		parse: parseMistral,
		fix:   "llama-server: add --jinja; vLLM: --tool-call-parser mistral (with --tokenizer-mode mistral for Devstral/Magistral); Ollama: a model whose template declares tools",
	},
	{
		format: "llama3", title: "Llama 3 <|python_tag|>",
		opens: []string{"<|python_tag|>"},
		probe: func(_, rest string, _ *Toolset, _ bool) int {
			t := strings.TrimLeft(rest, " \t\r\n")
			switch {
			case t == "":
				return wait
			case t[0] == '{':
				return commit
			}
			return probePyCall(t)
		},
		end: func(s string, final bool) int {
			return jsonOrPyEnd(s, len("<|python_tag|>"), final, "<|eom_id|>", "<|eot_id|>", ";")
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonOrPyCalls(s[len("<|python_tag|>"):]) },
		fix:   "llama-server: add --jinja; vLLM: --tool-call-parser llama3_json (Llama 3.2/3.3: pythonic)",
	},
	{
		format: "deepseek", title: "DeepSeek <｜tool▁calls▁begin｜>",
		opens: []string{dsCallsBegin, dsCallBegin, dsASCII(dsCallsBegin), dsASCII(dsCallBegin)},
		probe: probeDeepSeek,
		end: func(s string, final bool) int {
			if strings.HasPrefix(s, "<|") {
				return sectionEnd(s, final, dsASCII(dsCallEnd), dsASCII(dsCallsEnd), dsASCII(dsCallBegin))
			}
			return sectionEnd(s, final, dsCallEnd, dsCallsEnd, dsCallBegin)
		},
		parse: parseDeepSeek,
		fix:   "llama-server: add --jinja (a DeepSeek tool template); vLLM: --tool-call-parser deepseek_v3 (V3.1: deepseek_v31)",
	},
	{
		format: "harmony", title: "gpt-oss harmony <|channel|>commentary to=functions.…",
		opens: []string{"<|channel|>commentary to=functions.", "<|start|>assistant<|channel|>commentary to=functions.", "<|start|>assistant to=functions."},
		probe: probeHarmony,
		end:   harmonyEnd,
		parse: parseHarmony,
		fix:   "llama-server: add --jinja (a build with gpt-oss/harmony support); vLLM: serve gpt-oss with its harmony parser (--tool-call-parser openai); LM Studio/Ollama: update to a version that parses harmony",
	},
	{
		// The same syntax with its special tokens stripped by the server,
		// which leaves no marker: it counts only as the whole answer.
		format: "harmony", title: "gpt-oss harmony",
		opens: []string{"commentary to=functions.", "assistantcommentary to=functions.", "to=functions."},
		whole: true,
		probe: probeHarmony,
		end:   harmonyEnd,
		parse: parseHarmony,
	},
	{
		// Stripped too, an analysis message before the call:
		// "analysisThe user wants…assistantcommentary to=functions.f json{…}".
		// The analysis is reasoning, never shown; the call runs.
		format: "harmony", title: "gpt-oss harmony",
		opens: []string{"analysis"},
		whole: true,
		probe: probeStrippedAnalysis,
		end:   harmonyEnd,
		parse: parseHarmony,
	},
	{
		format: "granite", title: "Granite/Phi-4-mini <|tool_call|>[…]",
		opens: []string{"<|tool_call|>"},
		probe: func(_, rest string, _ *Toolset, _ bool) int {
			if r := startsWithAfterSpace(rest, "["); r != reject {
				return r
			}
			return startsWithAfterSpace(rest, "{")
		},
		end: func(s string, final bool) int {
			return closeAfter(s, jsonEnd(s, skipSpace(s, len("<|tool_call|>"))), final, "<|/tool_call|>", "<|end_of_text|>")
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s[len("<|tool_call|>"):], false) },
		fix:   "llama-server: add --jinja; vLLM: --tool-call-parser granite (Granite) or phi4_mini_json (Phi-4-mini)",
	},
	{
		// granite-20b-functioncalling: <function_call> before each JSON
		// call, no closing tag (vLLM's granite-20b-fc parser).
		format: "granite_fc", title: "Granite-20B-FC <function_call> {…}",
		opens: []string{"<function_call>"},
		probe: func(_, rest string, _ *Toolset, _ bool) int { return startsWithAfterSpace(rest, "{") },
		end: func(s string, final bool) int {
			return closeAfter(s, jsonEnd(s, skipSpace(s, len("<function_call>"))), final)
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s[len("<function_call>"):], false) },
		fix:   "vLLM: --tool-call-parser granite-20b-fc (with its chat template); llama-server: add --jinja",
	},
	{
		format: "phi4_mini", title: "Phi-4-mini functools[…]",
		opens: []string{"functools["},
		bol:   true,
		probe: func(_, rest string, _ *Toolset, _ bool) int { return startsWithAfterSpace(rest, "{") },
		end: func(s string, final bool) int {
			return closeAfter(s, jsonEnd(s, len("functools")), final, "<|/tool_call|>")
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s[len("functools"):], false) },
		fix:   "vLLM: --tool-call-parser phi4_mini_json; llama-server: add --jinja",
	},
	{
		format: "kimi_k2", title: "Kimi K2 <|tool_calls_section_begin|>",
		opens: []string{kimiSection, kimiCallBegin},
		probe: probeKimi,
		end: func(s string, final bool) int {
			return sectionEnd(s, final, kimiCallEnd, kimiSectEnd, kimiCallBegin)
		},
		parse: parseKimi,
		fix:   "llama-server: add --jinja; vLLM: --tool-call-parser kimi_k2",
	},
	{
		format: "gemma4", title: "Gemma 4 <|tool_call>call:name{…}<tool_call|>",
		opens: []string{gemmaOpen},
		probe: probeGemma4,
		end:   gemma4End,
		parse: parseGemma4,
		fix:   "llama-server: add --jinja (a build that knows Gemma 4); vLLM: --enable-auto-tool-choice --tool-call-parser gemma4",
	},
	{
		format: "dsml", title: "DeepSeek-V3.2 DSML <｜DSML｜function_calls><｜DSML｜invoke name=…>",
		opens: []string{dsmlCalls, dsmlCallsV4, dsASCII(dsmlCalls), dsASCII(dsmlCallsV4)},
		probe: func(string, string, *Toolset, bool) int { return commit },
		end:   dsmlEnd,
		parse: parseDSML,
		fix:   "vLLM: --tool-call-parser deepseek_v32 (DeepSeek-V4: deepseek_v4); llama-server: add --jinja (a build with DeepSeek-V3.2's template)",
	},
	{
		// DeepSeek-V4 on the hosted API falls back, now and then, to a
		// tag with the call's id and name as attributes (reported in
		// felinics/Memoh#435).
		format: "deepseek_v4", title: "DeepSeek-V4 <tool_call id=… name=…>{…}</tool_call>",
		opens: []string{"<tool_call "},
		probe: probeAttrCall,
		end:   attrCallEnd,
		parse: parseAttrCall,
		fix:   "self-hosted: vLLM --tool-call-parser deepseek_v4 (llama-server: --jinja with the model's template); on DeepSeek's API nothing is to change — mm asks the model again",
	},
	{
		// Anthropic's XML function calls, which models trained on its
		// transcripts write: <function_calls><invoke name="f"><parameter
		// name="k">v</parameter></invoke></function_calls> (its legacy
		// tool-use prompt; MiniMax and DeepSeek-V3.2 took the same form).
		format: "invoke_xml", title: "<function_calls><invoke name=…><parameter name=…>",
		opens: []string{"<function_calls>", "<invoke name="},
		probe: func(open, rest string, _ *Toolset, final bool) int {
			if open == "<function_calls>" {
				return startsWithAfterSpace(rest, "<invoke name=")
			}
			return probeAttrCall("", " name="+rest, nil, final)
		},
		end: func(s string, final bool) int {
			if strings.HasPrefix(s, "<function_calls>") {
				return markerEnd("</function_calls>")(s, final)
			}
			return markerEnd("</invoke>")(s, final)
		},
		parse: func(s string, ts *Toolset) ([]Call, string) {
			body, _, _ := strings.Cut(s, "</function_calls>")
			return invokeCalls(body, "", ts)
		},
		fix: "the model writes XML calls its server does not parse: serve it with its own chat template and tool-call parser (llama-server: --jinja; vLLM: the model's --tool-call-parser)",
	},
	{
		format: "minimax", title: "MiniMax <minimax:tool_call><invoke name=…>",
		opens: []string{"<minimax:tool_call>"},
		probe: func(_, rest string, _ *Toolset, _ bool) int { return startsWithAfterSpace(rest, "<invoke name=") },
		end:   markerEnd("</minimax:tool_call>"),
		parse: parseMiniMax,
		fix:   "llama-server: add --jinja; vLLM: --tool-call-parser minimax_m2",
	},
	{
		// Command-R+ writes "Action:" then a fenced JSON list ending the
		// answer (its tool_use template); Command-R7B and Command-A wrap
		// the list in <|START_ACTION|>…<|END_ACTION|> (their templates).
		format: "command_r", title: "Command-R Action: ```json […]```",
		opens: []string{"Action:"},
		bol:   true,
		probe: probeCommandR,
		end:   commandREnd,
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(commandRBody(s), false) },
		fix:   "llama-server: add --jinja (Command-R's tool_use template); vLLM: --tool-call-parser cohere_command3; Ollama: a template that declares tools",
	},
	{
		format: "command_r", title: "Command-R <|START_ACTION|>[…]<|END_ACTION|>",
		opens: []string{startAction},
		probe: probeCommandR,
		end:   commandREnd,
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(commandRBody(s), false) },
	},
	{
		format: "react", title: "ReAct Action: name / Action Input: {…}",
		opens: []string{"Action:"},
		bol:   true,
		probe: probeReAct,
		end:   reactEnd,
		parse: parseReAct,
		fix:   "ReAct (Action / Action Input) is a prompt style, not a tool-call syntax: use the model's own chat template with tools (llama-server --jinja; vLLM: the model's --tool-call-parser)",
	},
	{
		format: "lfm2", title: "LFM2 <|tool_call_start|>[…]<|tool_call_end|>",
		opens: []string{"<|tool_call_start|>"},
		probe: func(_, rest string, _ *Toolset, _ bool) int { return startsWithAfterSpace(rest, "[") },
		end:   markerEnd("<|tool_call_end|>"),
		parse: func(s string, ts *Toolset) ([]Call, string) {
			body, _, _ := strings.Cut(s[len("<|tool_call_start|>"):], "<|tool_call_end|>")
			return jsonOrPyCalls(body)
		},
		fix: "llama-server: add --jinja (a build that knows LFM2); vLLM: --tool-call-parser pythonic",
	},
	{
		// A Python list of calls as the whole answer: [f(a=1), g(b="x")]
		// (vLLM's pythonic parser: Llama 3.2, ToolACE).
		format: "pythonic", title: "a Python list of calls [f(a=…)]",
		opens: []string{"["},
		whole: true,
		probe: probePythonic,
		end: func(s string, final bool) int {
			return closeAfter(s, balancedEnd(s, 0, true, false), final)
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonOrPyCalls(s) },
		fix:   "vLLM: --tool-call-parser pythonic (Llama 3.2: llama3_json or pythonic, with the model's template); llama-server: add --jinja",
	},
	{
		format: "lmstudio", title: "LM Studio [TOOL_REQUEST]…[END_TOOL_REQUEST]",
		opens: []string{"[TOOL_REQUEST]"},
		probe: func(_, rest string, _ *Toolset, _ bool) int { return startsWithAfterSpace(rest, "{") },
		end: func(s string, final bool) int {
			return closeAfter(s, jsonEnd(s, skipSpace(s, len("[TOOL_REQUEST]"))), final, "[END_TOOL_REQUEST]")
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s[len("[TOOL_REQUEST]"):], false) },
		fix:   "LM Studio: load a model it marks as tool-capable (native tool use), or use a server that applies the model's own template",
	},
	{
		format: "gemma", title: "Gemma ```tool_code",
		opens: []string{"```tool_code"},
		bol:   true,
		probe: probeToolCode,
		end: func(s string, final bool) int {
			i := strings.Index(s[len("```tool_code"):], "\n"+fence)
			if i < 0 {
				return -1
			}
			return len("```tool_code") + i + 1 + len(fence)
		},
		parse: parseToolCode,
		fix:   "Gemma 3 has no tool-call tokens: use a server template that parses its calls (Ollama/llama-server with a tools-aware Gemma template) or a model trained for tool calls",
	},
	{
		format: "fenced_json", title: "a Markdown-fenced JSON object",
		opens: []string{"```json"},
		whole: true,
		probe: func(_, rest string, ts *Toolset, final bool) int {
			v := probeFenced(rest, "{", final)
			if v != reject {
				body := strings.TrimSpace(rest)
				if strings.HasPrefix(body, "{") && jsonHeader([]byte(body), ts) == headerReject {
					return reject // JSON that is no call: shown as it streams
				}
				if _, ok := jsonCall(body, ts, true); !ok && (final || jsonEnd(body, 0) > 0) {
					return reject // an example of JSON that is not a call
				}
			}
			return v
		},
		end: func(s string, final bool) int {
			return closeAfter(s, jsonEnd(s, skipSpace(s, len("```json"))), final, fence)
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s[len("```json"):], false) },
		fix:   "the server does not apply the model's tool-call template (llama-server: --jinja; vLLM: the model's --tool-call-parser)",
	},
	{
		// Any other fence whose first line opens a call (```xml then
		// <tool_call>, ``` then <|tool_call>…), as the whole answer: read
		// by the families above, inside the fence.
		format: "fenced", title: "a call in a Markdown fence",
		opens: []string{fence},
		whole: true,
		probe: probeFencedCall,
		end: func(s string, final bool) int {
			if k := strings.Index(s[len(fence):], "\n"+fence); k >= 0 {
				return len(fence) + k + 1 + len(fence)
			}
			return -1
		},
		inner: true,
		fix:   "the server does not apply the model's tool-call template (llama-server: --jinja; vLLM: the model's --tool-call-parser)",
	},
	{
		format: "openai_json", title: "an OpenAI message as JSON {\"tool_calls\": […]}",
		opens: []string{"{"},
		whole: true,
		probe: probeMessageJSON,
		end: func(s string, final bool) int {
			return jsonOrPyEnd(s, 0, final, ";")
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s, false) },
		fix:   "llama-server: add --jinja (GLM-4.5's template); vLLM: --tool-call-parser glm45",
	},
	{
		format: "json", title: "a bare JSON object",
		opens: []string{"{"},
		whole: true,
		probe: probeBareJSON,
		end: func(s string, final bool) int {
			return jsonOrPyEnd(s, 0, final, ";")
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s, false) },
		fix:   "the server does not apply the model's tool-call template (llama-server: --jinja; vLLM: the model's --tool-call-parser, e.g. llama3_json)",
	},
	{
		// What the family above turns down: a list of calls, a tool that
		// is not offered, OpenAI's nested "function" — to run, or to note.
		format: "json", title: "a bare JSON object",
		opens:    []string{"{", "["},
		whole:    true,
		fallback: true,
		probe:    probeJSONLine,
		end: func(s string, final bool) int {
			return jsonOrPyEnd(s, 0, final, ";")
		},
		parse: func(s string, ts *Toolset) ([]Call, string) { return jsonCalls(s, false) },
	},
	{
		format: "invented_tag", title: "tags named after a tool or a call (<read_file>…</read_file>)",
		opens:    []string{"<"},
		fallback: true,
		probe:    probeTag,
		end:      tagEnd,
		parse:    parseTag,
		fix:      "the model is not using its tool-call syntax: serve it with its own chat template and parser (llama-server: --jinja; vLLM: the model's --tool-call-parser)",
	},
	{
		format: "unknown", title: "tool-call markup mm has no reader for",
		opens:    []string{"<|", "<｜", "<", "["},
		fallback: true,
		probe:    probeSpecial,
		end:      markupEnd,
		parse:    parseUnknown,
		fix:      "the server returns the model's tool-call tokens as text: use a build and template that parse them (llama-server: --jinja; vLLM: the model's --tool-call-parser)",
	},
	{
		// Functionary v3: >>>name, then the arguments on the next line
		// (MeetKai's functionary prompt template).
		format: "unknown", title: "tool-call markup mm has no reader for",
		opens:    []string{">>>"},
		bol:      true,
		fallback: true,
		probe: func(_, rest string, _ *Toolset, final bool) int {
			line, _, nl := strings.Cut(rest, "\n")
			switch {
			case line == "" && !nl || !nl && isName(line) && len(line) <= maxTagSlack:
				return waitOrReject(final)
			case nl && line != "" && isName(line):
				return commit
			}
			return reject
		},
		end:   markupEnd,
		parse: parseUnknown,
	},
	{
		// Qwen-Agent's function-calling prompt (✿FUNCTION✿: name /
		// ✿ARGS✿: {…}), which no server parses.
		format: "unknown", title: "tool-call markup mm has no reader for",
		opens:    []string{"✿FUNCTION✿"},
		bol:      true,
		fallback: true,
		probe:    func(string, string, *Toolset, bool) int { return commit },
		end:      markupEnd,
		parse:    parseUnknown,
	},
}

// firstBytes says, for each byte, where it may open a call of some
// family: anywhere, only at the start of a line, only as the whole answer.
var firstBytes = func() (b [256]struct{ any, bol, whole bool }) {
	for _, f := range families {
		for _, o := range f.opens {
			switch {
			case f.whole:
				b[o[0]].whole = true
			case f.bol:
				b[o[0]].bol = true
			default:
				b[o[0]].any = true
			}
		}
	}
	return b
}()

// opener is one opening marker of a family.
type opener struct {
	f    *family
	open string
}

// openers lists, for each byte, the openers that start with it, in table
// order: the detector tries only those. At most 64 share a byte (the
// detector's dead mask; TestOpenersFit).
var openers = func() (o [256][]opener) {
	for _, f := range families {
		for _, op := range f.opens {
			o[op[0]] = append(o[op[0]], opener{f, op})
		}
	}
	return o
}()

// familyOf is the table entry of a format (the first, for a format that
// has two entries).
func familyOf(f TextCallFormat) *family {
	for _, fam := range families {
		if fam.format == f {
			return fam
		}
	}
	return &family{format: f, title: string(f)}
}

// Families lists the formats of the table, each once, in table order.
func Families() []TextCallFormat {
	var out []TextCallFormat
	for _, f := range families {
		if len(out) == 0 || out[len(out)-1] != f.format {
			out = append(out, f.format)
		}
	}
	return out
}

func one(name string, args json.RawMessage) []Call {
	if args == nil {
		return nil
	}
	return []Call{{Name: name, Arguments: args}}
}

// startsWithAfterSpace: rest, after whitespace, starts with want (commit),
// may still (wait), or does not (reject).
func startsWithAfterSpace(rest, want string) int {
	t := strings.TrimLeft(rest, " \t\r\n")
	switch {
	case len(rest)-len(t) > maxTagSlack:
		return reject
	case strings.HasPrefix(t, want):
		return commit
	case isPrefixOf(t, want) || t == "":
		return wait
	}
	return reject
}

// markerEnd ends a call at the first marker.
func markerEnd(marker string) func(string, bool) int {
	return func(s string, _ bool) int {
		if i := strings.Index(s, marker); i >= 0 {
			return i + len(marker)
		}
		return -1
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
		i++
	}
	return i
}

// awaitNext is what end returns for a call that is complete but for the
// closing markers that may follow it: the detector then looks at every
// byte until the end is decided.
const awaitNext = -2

// closeAfter ends a call whose body ended at j (-1: not yet), taking any
// closing markers that follow it; while what follows may still be one,
// it waits (awaitNext), unless the stream ended.
func closeAfter(s string, j int, final bool, closers ...string) int {
	if j < 0 {
		return -1
	}
	for {
		k := skipSpace(s, j)
		if k == len(s) {
			if final {
				return j
			}
			return awaitNext
		}
		matched := false
		for _, c := range closers {
			if strings.HasPrefix(s[k:], c) {
				j, matched = k+len(c), true
				break
			}
			if isPrefixOf(s[k:], c) {
				if final {
					return len(s) // a closing marker cut off: the call is complete
				}
				return awaitNext
			}
		}
		if !matched {
			return j
		}
	}
}

// sectionEnd ends a section of calls at its end marker, or after its last
// closed call when what follows is neither another call nor the marker.
func sectionEnd(s string, final bool, callEnd, sectEnd, callBegin string) int {
	if i := strings.Index(s, sectEnd); i >= 0 {
		return i + len(sectEnd)
	}
	p := strings.LastIndex(s, callEnd)
	if p < 0 {
		return -1
	}
	p += len(callEnd)
	k := skipSpace(s, p)
	rest := s[k:]
	switch {
	case strings.HasPrefix(rest, callBegin):
		return -1 // the next call streams
	case rest == "" || isPrefixOf(rest, callBegin) || isPrefixOf(rest, sectEnd):
		if final {
			return len(s)
		}
		return awaitNext
	}
	return p
}

// jsonOrPyEnd ends a run of JSON objects or Python calls starting at i,
// separated by whitespace or the closers.
func jsonOrPyEnd(s string, i int, final bool, closers ...string) int {
	for {
		i = skipSpace(s, i)
		var j int
		if i < len(s) && (s[i] == '{' || s[i] == '[') {
			j = jsonEnd(s, i)
		} else {
			j = balancedEnd(s, i, true, true)
		}
		j = closeAfter(s, j, final, closers...)
		if j < 0 {
			return j
		}
		k := skipSpace(s, j)
		if k < len(s) && s[k] == '{' && s[i] == '{' {
			i = k // another object
			continue
		}
		return j
	}
}

// indexOutsideStrings is the first marker in s that is not inside a JSON
// string, -1 when none.
func indexOutsideStrings(s, marker string) int {
	inStr, esc := false, false
	for k := 0; k < len(s); k++ {
		c := s[k]
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && strings.HasPrefix(s[k:], marker):
			return k
		}
	}
	return -1
}

// jsonEnd is the end of the JSON object or array at s[i], -1 while it is
// not complete or when there is none.
func jsonEnd(s string, i int) int {
	if i < 0 || i >= len(s) || s[i] != '{' && s[i] != '[' {
		return -1
	}
	return balancedEnd(s, i, false, false)
}

// balancedEnd follows brackets and strings from s[i] to where the first
// value closes; py: single quotes delimit strings too and ( ) nest, and
// the value may start with a name (a Python call).
func balancedEnd(s string, i int, py, call bool) int {
	depth, inStr, esc := 0, byte(0), false
	opened := false
	for k := i; k < len(s); k++ {
		c := s[k]
		if inStr != 0 {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == inStr:
				inStr = 0
			}
			continue
		}
		switch {
		case c == '"' || py && c == '\'':
			inStr = c
		case c == '{' || c == '[' || py && c == '(':
			depth++
			opened = true
		case c == '}' || c == ']' || py && c == ')':
			depth--
			if depth < 0 {
				return -1
			}
			if depth == 0 {
				return k + 1
			}
		case !opened && call && !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
			return -1
		}
	}
	return -1
}

// probeQwen: <tool_call> then <function=, or <function=name> naming an
// offered tool or followed by <parameter=.
func probeQwen(open, rest string, ts *Toolset, _ bool) int {
	if open != tagFunction {
		return startsWithAfterSpace(rest, tagFunction)
	}
	name, after, closed := strings.Cut(rest, ">")
	if !closed {
		if len(name) > maxTagSlack || !isName(name) {
			return reject
		}
		return wait
	}
	if !isName(name) || name == "" {
		return reject
	}
	if ts.Known(name) {
		return commit
	}
	return startsWithAfterSpace(after, tagParameter)
}

// probeGLM: <tool_call>name, then <arg_key> or </tool_call>.
func probeGLM(_, rest string, _ *Toolset, _ bool) int {
	t := strings.TrimLeft(rest, " \t\r\n")
	n := 0
	for n < len(t) && isName(t[n:n+1]) {
		n++
	}
	if n == 0 || n > maxTagSlack {
		if t == "" {
			return wait
		}
		return reject
	}
	u := strings.TrimLeft(t[n:], " \t\r\n")
	switch {
	case strings.HasPrefix(u, "<arg_key>") || strings.HasPrefix(u, tagToolEnd):
		return commit
	case u == "" || isPrefixOf(u, "<arg_key>") || isPrefixOf(u, tagToolEnd):
		return wait
	}
	return reject
}

// probeMistral: [TOOL_CALLS] then a JSON list of calls, or a name then
// [ARGS], [CALL_ID] or the object of arguments.
func probeMistral(_, rest string, _ *Toolset, _ bool) int {
	t := strings.TrimLeft(rest, " \t\r\n")
	if t == "" {
		return wait
	}
	if t[0] == '[' {
		return startsWithAfterSpace(t[1:], "{")
	}
	n := 0
	for n < len(t) && isName(t[n:n+1]) {
		n++
	}
	if n == 0 || n > maxTagSlack {
		return reject
	}
	after := t[n:]
	for _, m := range []string{"[ARGS]", "[CALL_ID]", "{"} {
		if strings.HasPrefix(after, m) {
			return commit
		}
		if isPrefixOf(after, m) || after == "" {
			return wait
		}
	}
	return reject
}

// probeDeepSeek: the section opener then a call opener; a call opener
// then a name and the separator.
func probeDeepSeek(open, rest string, _ *Toolset, _ bool) int {
	t := strings.TrimLeft(rest, " \t\r\n")
	if dsNorm(open) == dsCallsBegin {
		return either(startsWithAfterSpace(t, dsCallBegin), startsWithAfterSpace(t, dsASCII(dsCallBegin)))
	}
	k := strings.IndexByte(t, '<')
	if k < 0 {
		if isName(t) && len(t) <= maxTagSlack {
			return wait
		}
		return reject
	}
	if !isName(t[:k]) || k > maxTagSlack {
		return reject
	}
	return either(startsWithAfterSpace(t[k:], dsSep), startsWithAfterSpace(t[k:], dsASCII(dsSep)))
}

// either combines two probes: commit if one commits, wait if one waits.
func either(a, b int) int {
	switch {
	case a == commit || b == commit:
		return commit
	case a == wait || b == wait:
		return wait
	}
	return reject
}

// dsASCII writes a DeepSeek token with ASCII bars, as some conversions of
// its tokenizer render it.
func dsASCII(tok string) string { return strings.ReplaceAll(tok, "｜", "|") }

var dsNormalizer = strings.NewReplacer(
	dsASCII(dsCallsBegin), dsCallsBegin, dsASCII(dsCallsEnd), dsCallsEnd,
	dsASCII(dsCallBegin), dsCallBegin, dsASCII(dsCallEnd), dsCallEnd, dsASCII(dsSep), dsSep)

func dsNorm(s string) string { return dsNormalizer.Replace(s) }

// probeKimi: the section opener then a call opener; a call opener then
// functions.name:index and the argument marker.
func probeKimi(open, rest string, _ *Toolset, _ bool) int {
	if open == kimiSection {
		return startsWithAfterSpace(rest, kimiCallBegin)
	}
	t := strings.TrimLeft(rest, " \t\r\n")
	k := strings.IndexByte(t, '<')
	id := t
	if k >= 0 {
		id = t[:k]
	}
	id = strings.TrimSpace(id)
	if len(id) > maxTagSlack || !isName(strings.ReplaceAll(id, ":", "")) {
		return reject
	}
	if k < 0 {
		return wait
	}
	if id == "" {
		return reject
	}
	return startsWithAfterSpace(t[k:], kimiArgs)
}

// probeHarmony: to=functions.name followed by anything that is not part
// of a name (a space, <|constrain|>, <|message|>).
func probeHarmony(_, rest string, _ *Toolset, _ bool) int {
	n := 0
	for n < len(rest) && isName(rest[n:n+1]) {
		n++
	}
	switch {
	case n > maxTagSlack:
		return reject
	case n == len(rest):
		return wait
	case n == 0:
		return reject
	}
	switch rest[n] {
	case ' ', '<', '{', '\n':
		return commit
	}
	return reject
}

func harmonyEnd(s string, final bool) int {
	if i := strings.Index(s, "<|call|>"); i >= 0 {
		return i + len("<|call|>")
	}
	return closeAfter(s, jsonEnd(s, harmonyArgs(s)), final, "<|call|>", "<|end|>")
}

// harmonyArgs is where the arguments object starts: after <|message|>,
// else the first { after the recipient.
func harmonyArgs(s string) int {
	from := strings.Index(s, "to=functions.")
	if from < 0 {
		return -1
	}
	if i := strings.Index(s[from:], "<|message|>"); i >= 0 {
		from += i
	}
	if k := strings.IndexByte(s[from:], '{'); k >= 0 {
		return from + k
	}
	return -1
}

func parseHarmony(s string, ts *Toolset) ([]Call, string) {
	_, after, _ := strings.Cut(s, "to=functions.")
	n := 0
	for n < len(after) && isName(after[n:n+1]) {
		n++
	}
	name := after[:n]
	// With its tokens stripped, the recipient runs into the channel that
	// follows it: to=functions.read_file<|channel|>commentary.
	for _, ch := range []string{"commentary", "analysis"} {
		if base, ok := strings.CutSuffix(name, ch); ok && !ts.Known(name) && ts.Known(base) {
			name = base
		}
	}
	i := harmonyArgs(s)
	j := jsonEnd(s, i)
	if j < 0 {
		return nil, "the call is unfinished"
	}
	args := argsObject(json.RawMessage(s[i:j]))
	if args == nil || !json.Valid(args) {
		return nil, "the arguments are not a JSON object"
	}
	return one(name, args), ""
}

// probeFenced decides on a fenced block (after its opening line) that
// counts only when the answer ends with it: a value starting with want,
// the closing fence, then nothing but the end of the stream.
func probeFenced(rest, want string, final bool) int {
	t := strings.TrimLeft(rest, " \t\r\n")
	if t == "" {
		if final {
			return reject
		}
		return wait
	}
	if !strings.HasPrefix(t, want) {
		return reject
	}
	j := jsonEnd(t, 0)
	if j < 0 {
		if final {
			return reject
		}
		return wait
	}
	return fenceThenEnd(t[j:], final)
}

// fenceThenEnd: after a block's body, whitespace, the closing fence,
// whitespace, and the end of the stream.
func fenceThenEnd(after string, final bool) int {
	u := strings.TrimLeft(after, " \t\r\n")
	switch {
	case isPrefixOf(u, fence) || u == "":
		if final {
			return reject
		}
		return wait
	case !strings.HasPrefix(u, fence):
		return reject
	case strings.TrimSpace(u[len(fence):]) != "":
		return reject // prose follows: the block was an example
	case final:
		return commit
	}
	return wait
}

// probeToolCode: ```tool_code, a line that looks like a call, the closing
// fence, then the end of the stream.
func probeToolCode(_, rest string, _ *Toolset, final bool) int {
	body, after, closed := strings.Cut(rest, "\n"+fence)
	t := strings.TrimLeft(body, " \t\r\n")
	if t != "" && !(t[0] == '{' || t[0] == '[' || t[0] >= 'a' && t[0] <= 'z' || t[0] >= 'A' && t[0] <= 'Z') {
		return reject
	}
	if !closed {
		if final {
			return reject
		}
		return wait
	}
	return fenceThenEnd(fence+after, final)
}

func parseToolCode(s string, _ *Toolset) ([]Call, string) {
	body := s[len("```tool_code"):]
	if i := strings.LastIndex(body, fence); i >= 0 {
		body = body[:i]
	}
	body = strings.TrimSpace(body)
	if p, ok := strings.CutPrefix(body, "print("); ok && strings.HasSuffix(p, ")") {
		body = strings.TrimSpace(p[:len(p)-1])
	}
	return jsonOrPyCalls(body)
}

// probeBareJSON reads the beginning of a bare JSON answer, as far as it
// goes, to decide early: a key that is neither name-like nor
// arguments-like, or a name that is not an offered tool, rejects; an
// offered name followed by the start of an object of arguments commits;
// arguments before the name leave the decision to the end of the object.
func probeBareJSON(open, rest string, ts *Toolset, _ bool) int {
	h := open + rest
	if len(h) > maxHeader {
		if j := jsonEnd(h, 0); j > 0 {
			if _, ok := jsonCall(h[:j], ts, true); ok {
				return commit
			}
		}
		if len(h) > 16<<10 {
			return reject
		}
	}
	switch jsonHeader([]byte(h), ts) {
	case headerReject:
		return reject
	case headerCommit:
		return commit
	case headerArgsFirst:
		if strings.HasSuffix(h, "}") {
			if j := jsonEnd(h, 0); j > 0 {
				if _, ok := jsonCall(h[:j], ts, true); ok {
					return commit
				}
				return reject
			}
		}
	}
	if len(h) > maxHeader && jsonHeader([]byte(h), ts) != headerArgsFirst {
		return reject
	}
	return wait
}

// probePyCall: a dotted name then "(".
func probePyCall(t string) int {
	n := 0
	for n < len(t) && isName(t[n:n+1]) {
		n++
	}
	switch {
	case n == 0 || n > maxTagSlack:
		return reject
	case n == len(t):
		return wait
	case t[n] == '(':
		return commit
	}
	return reject
}
