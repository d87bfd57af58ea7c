package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/cmd/mm/internal/line"
	"github.com/mm-agent/mm/engine/detect"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/skills"
	"github.com/mm-agent/mm/tools"
)

// Host is what mm doctor checks, as the composition root built it from
// the config: the same connector, sessions, language servers, skills and
// MCP servers a turn would use, so that a check that passes means a turn
// gets that far.
type Host struct {
	// Config is the config in use; Trust its workspace trust state (nil:
	// none).
	Config *config.Config
	Trust  *config.Trust
	// Client reaches the model server through the connector a turn uses.
	Client func(ctx context.Context) (*llm.Client, error)
	// FixedPrompt measures the system prompt and tool definitions of a
	// session in cwd: characters and tool names.
	FixedPrompt func(cwd string) (chars int, names []string, err error)
	// LSP is the language servers' configuration for cwd.
	LSP func(cwd string) (lspbridge.Config, error)
	// Skills is the skill library of cwd.
	Skills func(cwd string) *skills.Library
	// MCP starts the config's MCP servers for cwd: their tools, one note
	// per server that did not start, and what stops them.
	MCP func(ctx context.Context, cwd string) (ts []tools.Tool, notes []string, stop func())
	// StateDir is mm's state directory (where its log goes), or why there
	// is none.
	StateDir func() (string, error)
	// Sandbox says what confines commands — the mechanism (namespaces,
	// landlock, none), a line saying why, and the ⚠ line when it is
	// weaker than asked or runs no command; nil: the sandbox is off.
	Sandbox func() (mechanism, text, warning string)
	// Getenv reads the environment mm was started with (NO_COLOR, TERM),
	// never the process's; nil reads nothing.
	Getenv func(string) string
}

// Check is one line of mm doctor, and one object of its --json
// form's "checks". Only what breaks a turn fails; a missing optional part
// is a note with the line that installs it.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, fail, note
	Text   string `json:"text"`
	Fix    string `json:"fix,omitempty"`
}

// The statuses of a Check.
const (
	StatusOK   = "ok"
	StatusFail = "fail"
	StatusNote = "note"
)

// doctor checks a set-up from the config to a real tool-call round trip
// and prints one line per check; exit 1 when any failed.
type doctor struct {
	h      Host
	cwd    string
	checks []Check
	out    io.Writer
	json   bool
	colour bool
}

func (d *doctor) add(c Check) {
	d.checks = append(d.checks, c)
	if !d.json {
		fmt.Fprintln(d.out, d.format(c))
	}
}

func (d *doctor) ok(name, format string, args ...any) {
	d.add(Check{Name: name, Status: StatusOK, Text: fmt.Sprintf(format, args...)})
}

func (d *doctor) fail(name, text, fix string) {
	d.add(Check{Name: name, Status: StatusFail, Text: text, Fix: fix})
}

func (d *doctor) note(name, text, fix string) {
	d.add(Check{Name: name, Status: StatusNote, Text: text, Fix: fix})
}

func (d *doctor) format(c Check) string {
	mark := map[string]string{StatusOK: "✓", StatusFail: "✗", StatusNote: "•"}[c.Status]
	if d.colour {
		mark = map[string]string{StatusOK: "\x1b[32m✓\x1b[0m", StatusFail: "\x1b[31m✗\x1b[0m", StatusNote: "\x1b[2m•\x1b[0m"}[c.Status]
	}
	s := mark + " " + c.Name + ": " + c.Text
	if c.Fix != "" {
		s += " — " + c.Fix
	}
	return s
}

// finish prints the JSON form when asked and returns the exit code.
func (d *doctor) finish() int {
	failed := slices.ContainsFunc(d.checks, func(c Check) bool { return c.Status == StatusFail })
	if d.json {
		b, _ := json.MarshalIndent(map[string]any{"ok": !failed, "checks": d.checks}, "", "  ")
		fmt.Fprintln(d.out, string(b))
	}
	if failed {
		return exitcode.Failed
	}
	return exitcode.OK
}

// Run is `mm doctor [--json]`; it returns the exit code. cfgErr is the
// config's error, if any: then nothing else can be trusted and only that
// line is printed.
func Run(ctx context.Context, h Host, cfgErr error, cwd string, jsonOut bool, stdout, stderr io.Writer) int {
	d := &doctor{h: h, cwd: cwd, out: stdout, json: jsonOut, colour: !jsonOut && line.Colour(stdout, h.Getenv)}
	if cfgErr != nil {
		d.fail("config", strings.TrimPrefix(cfgErr.Error(), config.ErrInvalid.Error()+": "), "fix the line named, or run without a config to use the defaults")
		return d.finish()
	}
	if h.Config.Source == "built-in defaults" {
		d.ok("config", "none found, built-in defaults (.mm/agent.yaml or ~/.config/mm/agent.yaml to change them)")
	} else if h.Config.Base != "" {
		d.ok("config", "%s, laid over yours: %s", h.Config.Source, h.Config.Base)
	} else {
		d.ok("config", "%s", h.Config.Source)
	}
	d.trust()
	d.sandbox()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if c, model := d.server(ctx); c != nil && model != "" {
		window := d.window(ctx, c, model)
		d.fixedPrompt(window)
		d.toolCall(ctx, c, model)
	} else {
		d.fixedPrompt(0)
	}
	d.languageServers(ctx)
	d.mcpServers(ctx)
	d.skills()
	d.stateDir()
	return d.finish()
}

// server finds and reaches the model server and its model through the
// same connector a turn uses; nil when a turn could not start.
func (d *doctor) server(ctx context.Context) (*llm.Client, string) {
	how := "configured"
	if d.h.Config.BaseURL == "" {
		how = "found on a usual local port"
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := d.h.Client(cctx)
	if err != nil {
		fix := ""
		if llm.Classify(err) == llm.ClassNoServer {
			fix = llm.StartHint() + ", then run `mm setup`"
		}
		d.fail("model server", llm.Explain(err), fix)
		return nil, ""
	}
	models, err := c.Models(cctx)
	if err != nil {
		d.fail("model server", fmt.Sprintf("%s at %s: %s", c.Provider(), c.BaseURL(), llm.Explain(err)), "")
		return nil, ""
	}
	text := fmt.Sprintf("%s at %s (%s)", c.Provider(), c.BaseURL(), how)
	if v, err := c.ServerVersion(cctx); err == nil && v != "" {
		text += ", version " + v
	}
	d.ok("model server", "%s", text)
	return c, d.model(models, c.Provider())
}

func (d *doctor) model(models []string, provider string) string {
	want := d.h.Config.Model
	switch {
	case len(models) == 0:
		d.fail("model", "the server lists no model", "load one (llama-server -hf …, ollama pull …) or set model in the config")
		return ""
	case want == "":
		d.ok("model", "%s (the first of %d listed; set model to choose)", models[0], len(models))
		return models[0]
	}
	for _, m := range models {
		if m == want || (provider == llm.ProviderOllama && strings.TrimSuffix(m, ":latest") == strings.TrimSuffix(want, ":latest")) {
			d.ok("model", "%s (listed by the server)", want)
			return want
		}
	}
	listed := models
	if len(listed) > 5 {
		listed = append(listed[:5:5], "…")
	}
	fix := "set model to one of them"
	if provider == llm.ProviderOllama {
		fix = "ollama pull " + want + ", or " + fix
	}
	d.fail("model", fmt.Sprintf("%s is not served (the server lists %s)", want, strings.Join(listed, ", ")), fix)
	return ""
}

// window reports the context window and where it came from; 0 when
// unknown.
func (d *doctor) window(ctx context.Context, c *llm.Client, model string) int {
	if n := d.h.Config.ContextWindow; n > 0 {
		d.ok("context window", "%d tokens (contextWindow in the config)", n)
		return n
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	n, source, err := c.ContextWindow(wctx, model)
	if err != nil || n <= 0 {
		d.note("context window", "unknown (the server did not say)", "set contextWindow in the config so that mm can budget the conversation")
		return 0
	}
	d.ok("context window", "%d tokens (%s)", n, source)
	return n
}

// fixedPrompt measures the system prompt and tool definitions of a session
// here and compares them with the window: a window that cannot hold them
// cannot hold a turn.
func (d *doctor) fixedPrompt(window int) {
	chars, names, err := d.h.FixedPrompt(d.cwd)
	if err != nil {
		d.fail("fixed prompt", "cannot open the workspace: "+err.Error(), "")
		return
	}
	tokens := int(math.Ceil(float64(chars) / 3.5)) // compact's estimate
	text := fmt.Sprintf("%s characters ≈ %s tokens: system prompt and %d tools (%s)", thousands(chars), thousands(tokens), len(names), strings.Join(names, ", "))
	switch {
	case window > 0 && window < tokens:
		d.fail("fixed prompt", text+fmt.Sprintf(", more than the %s-token window", thousands(window)),
			"give the model a larger window (llama-server -c 32768; Ollama: OLLAMA_CONTEXT_LENGTH=32768), or turn tools off (bashTool, editTools, planTool)")
	case window > 0 && window < tokens+4096:
		d.note("fixed prompt", text+fmt.Sprintf(", leaving %s of the %s-token window for the conversation", thousands(window-tokens), thousands(window)),
			"16k tokens or more is comfortable (llama-server -c 32768)")
	default:
		d.ok("fixed prompt", "%s", text)
	}
}

// templateFix is the exact change that makes tool calls work, per server.
func templateFix(provider string) string {
	switch provider {
	case llm.ProviderLlamaCpp, llm.ProviderDMR:
		return "restart llama-server with --jinja (it applies the model's tool-call template), or use a model whose template supports tools"
	case llm.ProviderOllama:
		return "use a model whose Ollama template supports tools (`ollama show MODEL` lists tools under Capabilities)"
	case llm.ProviderVLLM:
		return "start vllm with --enable-auto-tool-choice --tool-call-parser <the model's parser, e.g. hermes>"
	case llm.ProviderLMStudio:
		return "load a model LM Studio marks as tool-capable"
	}
	return "use a server and model that support OpenAI tool calls (llama-server --jinja)"
}

// ToolCalls plays mm doctor's tool-call round trip with model on c and
// prints its lines (tool calls, reasoning) to out: mm setup checks the
// user's choice with the very check doctor makes. It reports whether the
// round trip worked.
func ToolCalls(ctx context.Context, c *llm.Client, model string, out io.Writer, colour bool) bool {
	d := &doctor{out: out, colour: colour}
	d.toolCall(ctx, c, model)
	return !slices.ContainsFunc(d.checks, func(c Check) bool { return c.Status == StatusFail })
}

// toolCall plays one real tool-call round trip.
func (d *doctor) toolCall(ctx context.Context, c *llm.Client, model string) {
	tctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	p := c.ProbeTools(tctx, model)
	secs := strconv.FormatFloat(p.Elapsed.Seconds(), 'f', 1, 64)
	fix := templateFix(c.Provider())
	switch {
	case p.Err != nil:
		if llm.Classify(p.Err) != llm.ClassToolsRejected {
			fix = ""
		}
		d.fail("tool calls", "the request with one tool failed: "+llm.Explain(p.Err), fix)
	case p.AsText:
		line := "the model wrote the call as text instead of calling the tool"
		if c := detect.FindTextCall(p.Content, llm.ProbeTool); c != nil {
			// The family seen says which template or parser is missing.
			line += " (syntax: " + c.Syntax() + ")"
			fix = c.ServerFix()
		}
		d.fail("tool calls", line, fix)
	case !p.Called:
		d.fail("tool calls", fmt.Sprintf("the model answered without calling the tool (%q)", p.Text),
			"use a model trained for tool calls (Qwen3, Qwen2.5-Coder, Mistral Small…); "+fix)
	case p.AnswerErr != nil:
		d.fail("tool calls", "the call came back but the server failed on its result: "+llm.Explain(p.AnswerErr), fix)
	default:
		d.ok("tool calls", "a real round trip in %s s (%s called with %s, then answered)", secs, llm.ProbeTool, p.Args)
	}
	switch {
	case p.Reasoning:
		d.ok("reasoning", "streamed in its own field (shown as thoughts, never sent back)")
	case p.ThinkTags:
		d.note("reasoning", "arrives as <think> tags inside the answer (mm filters them)", "llama-server --reasoning-format deepseek puts it in its own field")
	case p.Err == nil:
		d.note("reasoning", "none seen (a model without thinking, or thinking turned off)", "")
	}
}

// lspInstall is the line that installs each built-in language server.
var lspInstall = map[string]string{
	"gopls":              "go install golang.org/x/tools/gopls@latest",
	"pyright-langserver": "npm install -g pyright",
}

// languageServers looks up each configured server on PATH with its
// version; a missing one is a note (edits still work, without
// diagnostics).
func (d *doctor) languageServers(ctx context.Context) {
	cfg, err := d.h.LSP(d.cwd)
	if err != nil {
		d.fail("language servers", err.Error(), "fix the lsp block of the config")
		return
	}
	langs := make([]string, 0, len(cfg.Servers))
	for l := range cfg.Servers {
		langs = append(langs, l)
	}
	slices.Sort(langs)
	for _, lang := range langs {
		cmd := cfg.Servers[lang].Command
		if len(cmd) == 0 {
			continue
		}
		name := "language server " + lang
		path, err := exec.LookPath(cmd[0])
		if err != nil {
			fix := lspInstall[cmd[0]]
			if fix != "" {
				fix = "install: " + fix
			}
			d.note(name, cmd[0]+" not on PATH (edits work, without diagnostics)", fix)
			continue
		}
		d.ok(name, "%s", strings.TrimSpace(cmd[0]+" "+serverVersion(ctx, path)))
	}
}

// serverVersion asks a language server binary for its version (gopls
// version; pyright-langserver has none, pyright beside it does).
func serverVersion(ctx context.Context, path string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	switch filepath.Base(path) {
	case "gopls":
		cmd = exec.CommandContext(ctx, path, "version")
	case "pyright-langserver":
		p, err := exec.LookPath("pyright")
		if err != nil {
			return ""
		}
		cmd = exec.CommandContext(ctx, p, "--version")
	default:
		cmd = exec.CommandContext(ctx, path, "--version")
	}
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "v") || (f != "" && f[0] >= '0' && f[0] <= '9') {
			return f
		}
	}
	return line
}

func (d *doctor) skills() {
	set, warns, _ := d.h.Skills(d.cwd).Current()
	names := set.Names()
	if len(names) == 0 {
		d.note("skills", "none found", "put NAME/SKILL.md files in .mm/skills")
	} else {
		d.ok("skills", "%d (%s)", len(names), strings.Join(names, ", "))
	}
	for _, w := range warns {
		d.note("skills", w.String(), "fix its front matter (name, description)")
	}
}

// mcpServers starts the config's MCP servers as a session would and lists
// their tools; one that does not start is a note (the turn goes on
// without its tools).
func (d *doctor) mcpServers(ctx context.Context) {
	if len(d.h.Config.MCPServers) == 0 {
		return
	}
	ts, notes, stop := d.h.MCP(ctx, d.cwd)
	defer stop()
	var names []string
	for _, t := range ts {
		names = append(names, t.Name())
	}
	started := len(d.h.Config.MCPServers) - len(notes)
	if started > 0 {
		d.ok("MCP servers", "%d of %d started, %d tools (%s)", started, len(d.h.Config.MCPServers), len(names), strings.Join(names, ", "))
	}
	for _, n := range notes {
		d.note("MCP servers", n, "fix its command or URL in mcpServers")
	}
}

// sandbox says what confines commands and why; commands that cannot
// run at all fail.
func (d *doctor) sandbox() {
	if d.h.Sandbox == nil {
		d.note("sandbox", "off — commands run with your rights, unconfined", "set sandbox: on to confine them (Linux)")
		return
	}
	mech, text, warning := d.h.Sandbox()
	switch {
	case mech == "none":
		d.fail("sandbox", text, "mm runs no commands: make namespaces or Landlock available, or set sandbox: off")
	case warning != "":
		d.note("sandbox", strings.TrimPrefix(strings.TrimPrefix(warning, "⚠ "), "sandbox: "), "")
	default:
		d.ok("sandbox", "%s", text)
	}
}

// stateDir checks that mm can write its log where it keeps it.
func (d *doctor) stateDir() {
	dir, err := d.h.StateDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	var f *os.File
	if err == nil {
		f, err = os.CreateTemp(dir, ".doctor-*")
	}
	if err != nil {
		d.fail("state directory", err.Error(), "make it writable, or set XDG_STATE_HOME")
		return
	}
	f.Close()
	os.Remove(f.Name())
	d.ok("state directory", "%s (writable)", dir)
}

// thousands writes 12345 as 12,345.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// trust says whether the workspace's own config is trusted, and what is
// ignored until it is.
func (d *doctor) trust() {
	t := d.h.Trust
	switch {
	case t == nil || !t.Workspace:
		return
	case t.Trusted:
		d.ok("trust", "%s is trusted, as it is now (any change makes it untrusted again)", t.Path)
	case len(t.Ignored) == 0:
		d.ok("trust", "%s is not trusted; it sets nothing that needs trust", t.Path)
	default:
		d.note("trust", fmt.Sprintf("%s is not trusted: %s ignored", t.Path, strings.Join(t.Ignored, ", ")), "run `mm trust` here if you wrote it")
	}
}
