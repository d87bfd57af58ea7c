package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// doctorLines runs `mm doctor` and returns its lines by check name (the
// last line of a name wins) and the exit code.
func doctorLines(t *testing.T, env []string, args ...string) (map[string]string, string, int) {
	t.Helper()
	stdout, stderr, code := runInProcess(t, t.TempDir(), env, "", append([]string{"doctor"}, args...)...)
	if stderr != "" {
		t.Errorf("doctor wrote on stderr:\n%s", stderr)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		mark, rest, _ := strings.Cut(l, " ")
		name, _, _ := strings.Cut(rest, ":")
		if mark != "✓" && mark != "✗" && mark != "•" {
			t.Errorf("line without a mark: %q", l)
		}
		lines[name] = l
	}
	return lines, stdout, code
}

// doctorExit is doctorLines, where an exit code other than want fails the
// test.
func doctorExit(t *testing.T, want int, env []string, args ...string) (map[string]string, string) {
	t.Helper()
	lines, out, code := doctorLines(t, env, args...)
	if code != want {
		t.Errorf("exit %d, want %d:\n%s", code, want, out)
	}
	return lines, out
}

func wantLine(t *testing.T, lines map[string]string, out, name, mark string, words ...string) {
	t.Helper()
	l, ok := lines[name]
	if !ok {
		t.Errorf("no %q line:\n%s", name, out)
		return
	}
	if !strings.HasPrefix(l, mark+" ") {
		t.Errorf("%q line is not %s: %q", name, mark, l)
	}
	for _, w := range words {
		if !strings.Contains(l, w) {
			t.Errorf("%q line lacks %q: %q", name, w, l)
		}
	}
}

func TestDoctorHealthy(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "doctor_healthy")
	lines, out := doctorExit(t, 0, mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
	wantLine(t, lines, out, "config", "✓", "built-in defaults")
	wantLine(t, lines, out, "model server", "✓", srv.URL(), "llamacpp", "version fakellm")
	wantLine(t, lines, out, "model", "✓", "fake-model")
	wantLine(t, lines, out, "context window", "✓", "32768 tokens", "llama.cpp /props")
	wantLine(t, lines, out, "fixed prompt", "✓", "tokens", "bash", "edit_file")
	wantLine(t, lines, out, "tool calls", "✓", "mm_doctor_echo", `{"word":"ready"}`)
	wantLine(t, lines, out, "reasoning", "✓")
	wantLine(t, lines, out, "skills", "✓")
	wantLine(t, lines, out, "state directory", "✓", "writable")
	if srv.Remaining() != 0 {
		t.Errorf("the tool result was not sent back for an answer (%d steps left)", srv.Remaining())
	}
	// The round trip is real: the tool was offered, and its result sent.
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[0].Body), `"mm_doctor_echo"`) || !strings.Contains(string(reqs[1].Body), `"role":"tool"`) {
		t.Errorf("requests = %d, want the tool offered then its result sent", len(reqs))
	}
}

func TestDoctorToolCallsAsText(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "doctor_text_call")
	lines, out := doctorExit(t, 1, mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
	wantLine(t, lines, out, "model server", "✓")
	wantLine(t, lines, out, "tool calls", "✗", "as text", "syntax: Hermes", "--jinja")
}

// TestDoctorToolCallsAsTextFamily: the round trip names the syntax the
// call was written in and the server fix for that family.
func TestDoctorToolCallsAsTextFamily(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ content, syntax, fix string }{
		{`[TOOL_CALLS]mm_doctor_echo[ARGS]{"word": "ready"}`, "syntax: Mistral", "--tool-call-parser mistral"},
		{`<|channel|>commentary to=functions.mm_doctor_echo <|constrain|>json<|message|>{"word": "ready"}<|call|>`, "syntax: gpt-oss harmony", "harmony"},
		{`<|tool_call>call:mm_doctor_echo{word:<|"|>ready<|"|>}<tool_call|>`, "syntax: Gemma 4", "--tool-call-parser gemma4"},
		{`<｜DSML｜function_calls><｜DSML｜invoke name="mm_doctor_echo"><｜DSML｜parameter name="word" string="true">ready</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>`, "syntax: DeepSeek-V3.2 DSML", "deepseek_v32"},
		// A syntax mm has no reader for is still named as markup, with the
		// general fix.
		{`<|tool_use|>{"name": "mm_doctor_echo", "input": {"word": "ready"}}<|/tool_use|>`, "syntax: tool-call markup mm has no reader for", "--tool-call-parser"},
	} {
		t.Run(tc.syntax, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.ServeYAML(t, "steps:\n  - content: '"+tc.content+"'\n")
			lines, out := doctorExit(t, 1, mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
			wantLine(t, lines, out, "tool calls", "✗", "as text", tc.syntax, tc.fix)
		})
	}
}

func TestDoctorToolsRejected(t *testing.T) {
	t.Parallel()
	srv := llmtest.ServeYAML(t, `
steps:
  - http_error: {status: 400, body: '{"error":{"code":400,"message":"tools param requires --jinja flag","type":"invalid_request_error"}}'}
`)
	lines, out := doctorExit(t, 1, mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
	wantLine(t, lines, out, "tool calls", "✗", "--jinja")
}

func TestDoctorNoServer(t *testing.T) {
	t.Parallel()
	env := mmEnv(t, nil, "MM_BASE_URL=http://127.0.0.1:1/v1", "XDG_STATE_HOME="+t.TempDir())
	lines, out := doctorExit(t, 1, env)
	wantLine(t, lines, out, "model server", "✗", "127.0.0.1:1", "llama-server")
	if _, ok := lines["tool calls"]; ok {
		t.Errorf("a tool call was tried without a server:\n%s", out)
	}
	// What does not need the server is still checked.
	wantLine(t, lines, out, "fixed prompt", "✓")
	wantLine(t, lines, out, "state directory", "✓")
}

func TestDoctorWindowSmallerThanFixedPrompt(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "doctor_small_window")
	lines, out := doctorExit(t, 1, mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()))
	wantLine(t, lines, out, "context window", "✓", "1024 tokens")
	wantLine(t, lines, out, "fixed prompt", "✗", "1,024-token window", "-c 32768")
	wantLine(t, lines, out, "tool calls", "✓")
}

func TestDoctorBadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.yaml")
	testenv.WriteFile(t, cfg, "model: x\nmaxTurn: 3\n")
	lines, out := doctorExit(t, 1, mmEnv(t, nil, "MM_CONFIG="+cfg))
	wantLine(t, lines, out, "config", "✗", "line 2", "maxTurn")
}

func TestDoctorJSON(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "doctor_text_call")
	stdout, _, code := runInProcess(t, t.TempDir(), mmEnv(t, srv, "XDG_STATE_HOME="+t.TempDir()), "", "doctor", "--json")
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	var doc struct {
		OK     bool `json:"ok"`
		Checks []struct{ Name, Status, Text, Fix string }
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, stdout)
	}
	if doc.OK {
		t.Error("ok = true with a failed check")
	}
	found := false
	for _, c := range doc.Checks {
		if c.Name == "tool calls" {
			found = c.Status == "fail" && strings.Contains(c.Fix, "--jinja")
		}
	}
	if !found {
		t.Errorf("no failed tool calls check with the --jinja fix: %+v", doc.Checks)
	}
}

// TestDoctorMCPServers: the config's MCP servers are started; one that
// does not start is a note, not a failure.
func TestDoctorMCPServers(t *testing.T) {
	t.Parallel()
	bin := mcpServer(t)
	srv := scenario(t, "doctor_healthy")
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	testenv.WriteFile(t, cfg, "mcpServers:\n  - {name: greeter, command: "+bin+"}\n  - {name: broken, command: /nonexistent/mcp-server}\n")
	_, out, code := doctorLines(t, mmEnv(t, srv, "MM_CONFIG="+cfg, "XDG_STATE_HOME="+t.TempDir()))
	if code != 0 {
		t.Errorf("exit %d, want 0 (a broken MCP server is a note):\n%s", code, out)
	}
	if !strings.Contains(out, "✓ MCP servers: 1 of 2 started") || !strings.Contains(out, "• MCP servers: ") || !strings.Contains(out, "broken") {
		t.Errorf("MCP lines missing:\n%s", out)
	}
}
