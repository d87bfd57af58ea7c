package detect

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// textAll feeds chunks to a fresh detector, then flushes.
func textAll(ts *Toolset, chunks ...string) (string, *TextCall) {
	d := NewTextCallDetector(ts, TextCallOptions{})
	var show strings.Builder
	for _, c := range chunks {
		s, call := d.Write(c)
		show.WriteString(s)
		if call != nil {
			if s2, c2 := d.Write("trailing text after the cut"); s2 != "" || c2 != nil {
				panic("a done detector must ignore its input")
			}
			return show.String(), call
		}
	}
	s, call := d.Flush()
	show.WriteString(s)
	return show.String(), call
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	if raw == nil {
		return ""
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("arguments %q are not JSON: %v", raw, err)
	}
	return b.String()
}

type wantCall struct {
	format  TextCallFormat
	name    string
	args    string // compact JSON; "" when Problem is set
	whole   bool
	problem string // substring
	show    string
}

// checkSplits runs in through every two-way split and byte by byte, and
// checks each gives the same show and call as one write.
func checkSplits(t *testing.T, ts *Toolset, in string) (string, *TextCall) {
	t.Helper()
	show, call := textAll(ts, in)
	same := func(how string, s string, c *TextCall) {
		t.Helper()
		if s != show || (c == nil) != (call == nil) || c != nil && (c.Text != call.Text || c.Name() != call.Name() ||
			string(args0(c)) != string(args0(call)) || c.Problem != call.Problem || c.Whole != call.Whole) {
			t.Fatalf("%s: show %q call %+v; one write: show %q call %+v", how, s, c, show, call)
		}
	}
	for i := 0; i <= len(in); i++ {
		s, c := textAll(ts, in[:i], in[i:])
		same("split at "+itoa(i), s, c)
	}
	bytewise := make([]string, len(in))
	for i := 0; i < len(in); i++ {
		bytewise[i] = in[i : i+1]
	}
	s, c := textAll(ts, bytewise...)
	same("byte by byte", s, c)
	// What was shown plus the call is what the model wrote, up to the cut.
	got := show
	if call != nil {
		got += call.Text
	}
	if !strings.HasPrefix(in, got) || call == nil && got != in {
		t.Fatalf("show+call %q is not the input %q", got, in)
	}
	return show, call
}

func itoa(i int) string { return thousands(i) }

// args0 is the first call's arguments, nil when none.
func args0(c *TextCall) json.RawMessage {
	if c == nil || len(c.Calls) == 0 {
		return nil
	}
	return c.Calls[0].Arguments
}

func TestTextCallDetected(t *testing.T) {
	ts := testTools()
	tests := []struct {
		name string
		in   string
		want wantCall
	}{
		{"hermes whole answer",
			"<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls -la\"}}\n</tool_call>",
			wantCall{format: TextCallFormat("hermes"), name: "bash", args: `{"command":"ls -la"}`, whole: true}},
		{"hermes after prose",
			"I will list the files.\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>",
			wantCall{format: TextCallFormat("hermes"), name: "bash", args: `{"command":"ls"}`, show: "I will list the files.\n"}},
		{"hermes parameters key, braces in strings",
			"<tool_call>{\"name\": \"write_file\", \"parameters\": {\"path\": \"a.go\", \"content\": \"func f() { return \\\"}\\\" }\"}}</tool_call>",
			wantCall{format: TextCallFormat("hermes"), name: "write_file", args: `{"path":"a.go","content":"func f() { return \"}\" }"}`, whole: true}},
		{"hermes closing tag inside a string",
			"<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"doc.md\", \"content\": \"wrap it in </tool_call>\"}}</tool_call>",
			wantCall{format: TextCallFormat("hermes"), name: "write_file", args: `{"path":"doc.md","content":"wrap it in </tool_call>"}`, whole: true}},
		{"hermes double-encoded arguments",
			"<tool_call>{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"go.mod\\\"}\"}</tool_call>",
			wantCall{format: TextCallFormat("hermes"), name: "read_file", args: `{"path":"go.mod"}`, whole: true}},
		{"hermes alias name is known",
			"<tool_call>{\"name\": \"shell\", \"arguments\": {\"command\": \"pwd\"}}</tool_call>",
			wantCall{format: TextCallFormat("hermes"), name: "shell", args: `{"command":"pwd"}`, whole: true}},
		{"hermes unknown tool",
			"<tool_call>{\"name\": \"python\", \"arguments\": {\"code\": \"print(1)\"}}</tool_call>",
			wantCall{format: TextCallFormat("hermes"), name: "python", whole: true, problem: `no tool named "python"`}},
		{"hermes broken JSON ends at the closing tag",
			"<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}</tool_call> more",
			wantCall{format: TextCallFormat("hermes"), name: "", whole: true, problem: "not valid"}},
		{"qwen xml inside tool_call",
			"<tool_call>\n<function=bash>\n<parameter=command>\nls -la\n</parameter>\n</function>\n</tool_call>",
			wantCall{format: TextCallFormat("qwen_xml"), name: "bash", args: `{"command":"ls -la"}`, whole: true}},
		{"qwen xml bare, multi-line value, typed integer",
			"Writing it now.\n<function=write_file>\n<parameter=path>\nmain.go\n</parameter>\n<parameter=content>\npackage main\n\nfunc main() {}\n</parameter>\n</function>",
			wantCall{format: TextCallFormat("qwen_xml"), name: "write_file", args: `{"path":"main.go","content":"package main\n\nfunc main() {}"}`, show: "Writing it now.\n"}},
		{"qwen xml integer and missing closing parameter tags",
			"<function=bash>\n<parameter=command>\nsleep 1\n<parameter=timeout>\n30\n</function>",
			wantCall{format: TextCallFormat("qwen_xml"), name: "bash", args: `{"command":"sleep 1","timeout":30}`, whole: true}},
		{"qwen xml array parameter",
			"<function=edit_file>\n<parameter=path>\na.go\n</parameter>\n<parameter=edits>\n[{\"old\": \"a\", \"new\": \"b\"}]\n</parameter>\n</function>",
			wantCall{format: TextCallFormat("qwen_xml"), name: "edit_file", args: `{"path":"a.go","edits":[{"old":"a","new":"b"}]}`, whole: true}},
		{"qwen xml undeclared tool with parameters",
			"<function=python>\n<parameter=code>\nprint(1)\n</parameter>\n</function>",
			wantCall{format: TextCallFormat("qwen_xml"), name: "python", whole: true, problem: `no tool named "python"`}},
		{"after an unclosed backtick, the next line counts",
			"It`s done.\n<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>",
			wantCall{format: TextCallFormat("hermes"), name: "bash", args: `{"command":"ls"}`, show: "It`s done.\n"}},
		{"after a closed fence, a call counts",
			"```sh\nls\n```\n<function=bash><parameter=command>ls</parameter></function>",
			wantCall{format: TextCallFormat("qwen_xml"), name: "bash", args: `{"command":"ls"}`, show: "```sh\nls\n```\n"}},
		{"bare json",
			"{\"name\": \"bash\", \"arguments\": {\"command\": \"go test ./...\"}}",
			wantCall{format: TextCallFormat("json"), name: "bash", args: `{"command":"go test ./..."}`, whole: true}},
		{"bare json after blank lines, tool and parameters keys",
			"\n\n  {\"tool\": \"read_file\", \"parameters\": {\"path\": \"README.md\"}}\nDone.",
			wantCall{format: TextCallFormat("json"), name: "read_file", whole: true, show: "\n\n  ", problem: "text follows the call"}},
		{"bare json arguments before name",
			"{\"arguments\": {\"path\": \"a.go\", \"start\": 1}, \"name\": \"read_file\"}",
			wantCall{format: TextCallFormat("json"), name: "read_file", args: `{"path":"a.go","start":1}`, whole: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			show, call := checkSplits(t, ts, tt.in)
			if call == nil {
				t.Fatalf("no call detected; shown %q", show)
			}
			w := tt.want
			if show != w.show || call.Format != w.format || call.Name() != w.name || call.Whole != w.whole {
				t.Fatalf("got show %q format %s name %q whole %v; want %q %s %q %v", show, call.Format, call.Name(), call.Whole, w.show, w.format, w.name, w.whole)
			}
			if got := compactJSON(t, args0(call)); w.problem == "" && got != w.args {
				t.Fatalf("arguments %s, want %s", got, w.args)
			}
			if w.problem == "" && call.Problem != "" || !strings.Contains(call.Problem, w.problem) {
				t.Fatalf("problem %q, want %q", call.Problem, w.problem)
			}
			if call.Convertible() != (w.whole && w.problem == "") {
				t.Fatalf("Convertible() = %v", call.Convertible())
			}
		})
	}
}

// The acceptance case: a Qwen XML call split mid-tag, over three chunks,
// every way.
func TestTextCallQwenSplitMidTag(t *testing.T) {
	ts := testTools()
	in := "<function=bash><parameter=command>ls</parameter></function>"
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			show, call := textAll(ts, in[:i], in[i:j], in[j:])
			if show != "" || call == nil || call.Name() != "bash" || string(args0(call)) != `{"command":"ls"}` {
				t.Fatalf("chunks %q %q %q: show %q call %+v", in[:i], in[i:j], in[j:], show, call)
			}
		}
	}
	show, call := textAll(ts, "<func", "tion=ba", "sh>\n<para", "meter=command>\npwd\n</par", "ameter>\n</func", "tion>")
	if show != "" || call == nil || string(args0(call)) != `{"command":"pwd"}` {
		t.Fatalf("show %q call %+v", show, call)
	}
}

// The engine can cut while the call streams: the state says composing as
// soon as the syntax is unambiguous, and nothing of the call is shown.
func TestTextCallDecidesWhileStreaming(t *testing.T) {
	d := NewTextCallDetector(testTools(), TextCallOptions{})
	show, call := d.Write("Sure.\n<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.txt\", \"content\": \"")
	if show != "Sure.\n" || call != nil || d.State() != TextComposing {
		t.Fatalf("show %q call %v state %v", show, call, d.State())
	}
	show, call = d.Write(strings.Repeat("a long file ", 100))
	if show != "" || call != nil {
		t.Fatalf("the call leaked: %q", show)
	}
	if _, call = d.Write("\"}}\n</tool_call>"); call != nil || d.State() != TextComposing {
		t.Fatalf("decided before what follows the call: %+v", call)
	}
	// Another call may follow; anything else ends the calls: the
	// generation is cut there.
	_, call = d.Write("\n<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>\nThe result")
	if call == nil || call.Problem == "" || len(call.Calls) != 2 || d.State() != TextDone {
		t.Fatalf("call %+v state %v", call, d.State())
	}
}

func TestTextCallUnfinishedAtFlush(t *testing.T) {
	ts := testTools()
	tests := []struct {
		in, problem string
		args        string
	}{
		{"<tool_call>{\"name\": \"bash\", \"argum", "unfinished", ""},
		// The closing tag was cut off: the call is complete.
		{"<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_", "", `{"command":"ls"}`},
		// Qwen call whose last parameter was closed: the model only
		// forgot </function>.
		{"<function=bash>\n<parameter=command>\nls\n</parameter>\n", "", `{"command":"ls"}`},
		// Cut inside a value (max_tokens): never run half a file.
		{"<function=write_file>\n<parameter=path>\na\n</parameter>\n<parameter=content>\nhalf a fi", "cut off", ""},
	}
	for _, tt := range tests {
		_, call := checkSplits(t, ts, tt.in)
		if call == nil || !strings.Contains(call.Problem, tt.problem) || tt.problem == "" && call.Problem != "" || compactJSON(t, args0(call)) != tt.args {
			t.Errorf("%q: call %+v", tt.in, call)
		}
	}
}

func TestTextCallTooLong(t *testing.T) {
	d := NewTextCallDetector(testTools(), TextCallOptions{MaxCall: 100})
	_, call := d.Write("<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"" + strings.Repeat("x", 200))
	if call == nil || !strings.Contains(call.Problem, "passed 100 bytes") || call.Calls != nil {
		t.Fatalf("call %+v", call)
	}
}

// No false positives: answers that show, quote or discuss tool calls, JSON
// answers that are not calls, and ordinary text with < and {.
func TestTextCallNoFalsePositive(t *testing.T) {
	ts := testTools()
	tests := map[string]string{
		"json example in a fence after prose":        "Here is an example of a tool call:\n```json\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n```\nThe server turns it into a real call.",
		"hermes example in a fence":                  "The Hermes format looks like this:\n\n```xml\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\n```\n",
		"qwen example in a tilde fence":              "~~~\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n~~~\nThat is Qwen3-Coder's syntax.",
		"inline code":                                "Write `<tool_call>{\"name\": \"bash\", \"arguments\": {}}</tool_call>` and the parser does the rest.",
		"double backtick inline code":                "Use ``<function=bash>`` then ``<parameter=command>``.",
		"prose about the tag":                        "Models emit <tool_call> tags around a JSON object, and <function=name> blocks in Qwen3-Coder.",
		"json after prose":                           "The call looks like this:\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
		"json that is not a call":                    "{\"name\": \"Alice\", \"age\": 30}",
		"json naming a tool without args":            "{\"name\": \"bash\"}",
		"json with another key":                      "{\"name\": \"bash\", \"description\": \"runs a command\", \"arguments\": {}}",
		"json config answer":                         "{\n  \"compilerOptions\": {\"strict\": true}\n}",
		"empty object":                               "{}",
		"code comparisons and generics":              "If a < b and x<y, use Vec<T> or map[string]<-chan int; <div>ok</div> <function> <tool>",
		"undeclared function tag without parameters": "In PHP-like templates, <function=render> is a directive.",
		"go code in a fence":                         "```go\nfunc f(ch <-chan int) { for v := range ch { _ = v } }\n```\n",
		"braces mid-line":                            "Set x = {a: 1} and {\"name\": \"bash\", \"arguments\": {}} later.",
		"unclosed inline tick then tag":              "It`s fine.\nNext line has <tool_call> words.",
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			show, call := checkSplits(t, ts, in)
			if call != nil || show != in {
				t.Fatalf("false positive: call %+v, shown %q", call, show)
			}
		})
	}
	// With no tool offered, nothing is a call.
	in := "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>"
	if show, call := textAll(NewToolset(), in); call != nil || show != in {
		t.Fatalf("no tools: call %+v", call)
	}
}

// The corpus of realistic answers under testdata/normal must pass through
// untouched.
func TestTextCallCorpus(t *testing.T) {
	files, _ := filepath.Glob("testdata/normal/*")
	if len(files) == 0 {
		t.Fatal("no corpus")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in := string(b)
		for _, step := range []int{1, 3, 7, 64, len(in) + 1} {
			var chunks []string
			for s := in; s != ""; {
				k := min(step, len(s))
				chunks, s = append(chunks, s[:k]), s[k:]
			}
			if show, call := textAll(testTools(), chunks...); call != nil || show != in {
				t.Fatalf("%s (step %d): call %+v", f, step, call)
			}
		}
	}
}

// TestOpenersFit: the detector marks the openers turned down in a 64-bit
// mask, so no byte may start more than 64 of them.
func TestOpenersFit(t *testing.T) {
	for c, ops := range openers {
		if len(ops) > 64 {
			t.Errorf("%d openers start with %q", len(ops), rune(c))
		}
	}
}

// TestTextCallHoldBound: holding back what may open a call costs an
// ordinary answer nothing and one that quotes code or tags at most one
// line's opener: no byte of the normal answers waits more than a few
// tokens, and the first visible byte not at all (BenchmarkHoldLatency
// reports the same figures).
func TestTextCallHoldBound(t *testing.T) {
	files, _ := filepath.Glob("testdata/normal/answer_*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		first, _, max, ok := holdLatency(testTools(), string(b))
		if !ok || first > 0 || max > 4 {
			t.Errorf("%s: ok %v, first visible byte waited %d tokens, a byte waited %d", f, ok, first, max)
		}
	}
}

// FuzzTextCall covers every family's parser through the detector: seeded
// with the whole corpus, any text in any chunking gives the same result,
// what is shown plus the calls is what was written, and calls that would
// run have JSON objects for arguments.
func FuzzTextCall(f *testing.F) {
	for _, s := range []string{
		"<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}</tool_call>",
		"<function=bash><parameter=command>ls</parameter></function>",
		"{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}",
		"{\"arguments\": {}, \"name\": \"read_file\"}",
		"```\n<tool_call>{}\n```\n<tool_call>",
		"a < b { c } `<function=bash>`",
		"<<tool_call><function=x>\n<parameter=y>",
		"<|tool_call>call:read_file{path:<|\"|>a<|\"|>,n:[1,{k:<|\"|>}<tool_call|>",
		"<｜DSML｜function_calls><｜DSML｜invoke name=\"bash\"><｜DSML｜parameter name=\"command\" string=\"true\">ls",
		"<tool_call id=\"1\" name=\"bash\">{\"command\": \"ls\"}</tool_call> x",
		"Action: bash\nAction Input: {\"command\": \"ls\"}\nObservation:",
		"Action:\n```json\n[{\"tool_name\": \"bash\", \"parameters\": {}}]\n```",
		"analysisX.assistantcommentary to=functions.bashcommentary json{\"command\": \"ls\"}",
		"a <read_file> b\n<bash>\nls\n</bash>\n<bash/> </tool_call>. [TOOL_X] [TOOL_Y]\n",
		"<|python_tag|> then <|x|> and <tool|> ✿FUNCTION✿: bash",
		"{\"tool_calls\": [{\"function\": {\"name\": \"bash\", \"arguments\": \"{}\"}}]}",
		"[{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}, {\"name\": \"x\"}]",
	} {
		f.Add(s, uint8(5))
	}
	files, _ := filepath.Glob("testdata/textcalls/*.json")
	for _, file := range files {
		b, _ := os.ReadFile(file)
		var c corpusFamily
		if json.Unmarshal(b, &c) == nil {
			for _, tc := range c.Cases {
				f.Add(tc.Text, uint8(len(tc.Text)))
			}
		}
	}
	ts := testTools()
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		show, call := textAll(ts, in)
		n := int(step)%9 + 1
		var chunks []string
		for s := in; s != ""; {
			k := min(n, len(s))
			chunks, s = append(chunks, s[:k]), s[k:]
		}
		show2, call2 := textAll(ts, chunks...)
		if show2 != show || (call == nil) != (call2 == nil) || call != nil && (call.Text != call2.Text || call.Problem != call2.Problem || len(call.Calls) != len(call2.Calls)) {
			t.Fatalf("chunking changed the result: %q %+v vs %q %+v", show, call, show2, call2)
		}
		got := show
		if call != nil {
			got += call.Text
			for _, c := range call.Calls {
				if call.Problem == "" && (!json.Valid(c.Arguments) || !strings.HasPrefix(strings.TrimSpace(string(c.Arguments)), "{")) {
					t.Fatalf("invalid arguments %q", c.Arguments)
				}
			}
			if call.Convertible() && !ts.Known(call.Name()) {
				t.Fatalf("an unknown tool would run: %+v", call)
			}
			// Never run on a guess: markup no reader claims is noted, and
			// a call that lacks an argument its tool requires too.
			for _, c := range call.Calls {
				if r := ts.Resolve(c.Name, c.Arguments); call.Convertible() && ts.Missing(r.Name, r.Args) != "" {
					t.Fatalf("a call lacking an argument would run: %+v", call)
				}
			}
			if call.Convertible() && (call.Format == "unknown" || call.Format == "invented_tag") {
				t.Fatalf("markup no reader claims would run: %+v", call)
			}
		}
		if !strings.HasPrefix(in, got) || call == nil && got != in {
			t.Fatalf("show+call %q is not the input %q", got, in)
		}
	})
}

// TestTextCallStructuredWins: once the server sent a
// real tool call, markup held or being composed is its leak: dropped, not
// shown, not reported; text after it flows on, and a whole call written as
// text later is stripped too.
func TestTextCallStructuredWins(t *testing.T) {
	ts := testTools()
	tests := []struct {
		name        string
		before      []string // written before the structured call
		after       []string // written after it
		wantShow    string
		neverInShow []string
	}{
		{"qwen leak (real-streams/06)", []string{"Let me check.\n", "<tool_call>\n", "<function=get", "_current", "_weather"}, nil,
			"Let me check.\n", []string{"<tool_call>", "<function"}},
		{"hermes leak", []string{"Checking.\n<tool_call>\n{\"name\": \"bash\", \"argu"}, nil,
			"Checking.\n", []string{"<tool_call>", "bash"}},
		{"text after", []string{"<function=bash>\n<param"}, []string{"eter=command>\nls\n</parameter>\n</function>", " Done."},
			" Done.", []string{"<function", "parameter"}},
		{"whole call later", []string{"Ok. "}, []string{"<tool_call>{\"name\": \"bash\", \"arguments\": {}}</tool_call> and more"},
			"Ok.  and more", []string{"tool_call"}},
		{"gemma 4 leak", []string{"Reading.\n<|tool_call>call:read_", "file{path:<|\"|>a"}, []string{"<|\"|>}<tool_call|>"},
			"Reading.\n", []string{"<|", "call:"}},
		{"markup no reader knows", []string{"Reading.\n<|tool_use|>{\"name\": \"read_file\""}, []string{", \"input\": {}}<|/tool_use|>"},
			"Reading.\n", []string{"<|", "tool_use"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewTextCallDetector(ts, TextCallOptions{})
			var show strings.Builder
			write := func(chunks []string) {
				for _, c := range chunks {
					s, call := d.Write(c)
					if call != nil {
						t.Fatalf("a call was reported at %q: %+v", c, call)
					}
					show.WriteString(s)
				}
			}
			write(tt.before)
			d.Structured()
			write(tt.after)
			s, call := d.Flush()
			if call != nil {
				t.Fatalf("a call was reported at Flush: %+v", call)
			}
			show.WriteString(s)
			if show.String() != tt.wantShow {
				t.Errorf("shown %q, want %q", show.String(), tt.wantShow)
			}
			for _, n := range tt.neverInShow {
				if strings.Contains(show.String(), n) {
					t.Errorf("shown %q holds %q", show.String(), n)
				}
			}
		})
	}
}

// A fenced JSON answer that is not a call streams as it comes: it is
// released as soon as its first key shows it is no call.
func TestTextCallFencedJSONStreams(t *testing.T) {
	d := NewTextCallDetector(testTools(), TextCallOptions{})
	show, call := d.Write("```json\n{\"compilerOptions\": {")
	if call != nil || !strings.HasPrefix(show, "```json\n{\"compilerOptions\"") {
		t.Fatalf("held back: %q %+v", show, call)
	}
}

// FindTextCall reads a whole answer (what `mm doctor` does with a probe's
// reply): a call written in the reasoning is set aside, the one in the
// answer found, with the syntax's name and the server setting to fix.
func TestFindTextCall(t *testing.T) {
	answer := "<think>I could write <tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call> here.</think>" +
		"<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.go\"}}\n</tool_call>"
	c := FindTextCall(answer, "read_file", "bash")
	if c == nil {
		t.Fatal("no call found in the answer")
	}
	if c.Name() != "read_file" || compactJSON(t, args0(c)) != `{"path":"a.go"}` {
		t.Errorf("found %s %s, want read_file from the answer, not bash from the reasoning", c.Name(), args0(c))
	}
	if !strings.Contains(c.Syntax(), "<tool_call>") || !strings.Contains(c.ServerFix(), "--jinja") {
		t.Errorf("syntax %q, fix %q", c.Syntax(), c.ServerFix())
	}
	if c := FindTextCall("<think><tool_call>{\"name\":\"bash\",\"arguments\":{}}</tool_call></think>Nothing to run.", "bash"); c != nil {
		t.Errorf("a call only in the reasoning was found: %+v", c)
	}
	if c := FindTextCall("The file says hello.", "read_file"); c != nil {
		t.Errorf("plain text read as a call: %+v", c)
	}
}
