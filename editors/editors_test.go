package editors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	lua "github.com/yuin/gopher-lua"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// binDir holds the mm under test, built once and named "mm" so that each
// configuration's command resolves to it through PATH, unchanged.
var binDir string

func TestMain(m *testing.M) {
	bin, err := testenv.Build("../cmd/mm", "mm")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building mm:", err)
		os.Exit(1)
	}
	binDir = filepath.Dir(bin)
	os.Exit(m.Run())
}

// launch is what a client starts: the command, its arguments and the
// environment the configuration adds.
type launch struct {
	Command string
	Args    []string
	Env     map[string]string
}

// clients lists every configuration with the parser of its language.
var clients = []struct {
	name, file string
	parse      func(t *testing.T, src []byte) launch
}{
	{"zed", "zed/settings.json", parseAgentServers("agent_servers")},
	{"jetbrains", "jetbrains/acp.json", parseAgentServers("agent_servers")},
	{"vscode", "vscode/settings.json", parseAgentServers("acp.agents")},
	{"acpx", "acpx/config.json", parseACPX},
	{"codecompanion", "neovim-codecompanion/codecompanion.lua", parseCodeCompanion},
	{"avante", "neovim-avante/avante.lua", parseAvante},
	{"agent-shell", "emacs-agent-shell/mm-agent-shell.el", parseAgentShell},
}

// TestConfigsStartMM parses each configuration and starts the command line
// it gives: the process must answer ACP initialize as mm, then exit when
// its stdin closes, as an editor expects.
func TestConfigsStartMM(t *testing.T) {
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			src, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			l := c.parse(t, src)
			if l.Command != "mm" {
				t.Errorf("command = %q, want mm (found on PATH after go install)", l.Command)
			}
			if len(l.Args) != 1 || l.Args[0] != "acp" {
				t.Errorf("args = %q, want [acp]", l.Args)
			}
			initialize(t, l)
		})
	}
}

// TestEditorsReadmeLinksEveryFolder keeps the table of editors/README.md
// in step with the folders.
func TestEditorsReadmeLinksEveryFolder(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if !bytes.Contains(readme, []byte("("+e.Name()+"/)")) {
			t.Errorf("README.md does not link %s/", e.Name())
		}
		if _, err := os.Stat(filepath.Join(e.Name(), "README.md")); err != nil {
			t.Errorf("%s has no README.md", e.Name())
		}
	}
}

// TestACPXConfigRunsATurn goes one step further with the one client that
// runs here: the real acpx, reading editors/acpx/config.json from its home,
// plays a whole turn with mm against the fake model server.
func TestACPXConfigRunsATurn(t *testing.T) {
	acpx := testenv.NeedTool(t, "acpx")
	srv := llmtest.NewServer(llmtest.Scenario{Steps: []llmtest.Step{{Content: "Hello from mm."}}})
	defer srv.Close()
	home := t.TempDir()
	cfg, err := os.ReadFile("acpx/config.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".acpx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".acpx", "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, acpx, "--cwd", dir, "--approve-all", "mm", "exec", "say hello")
	cmd.Dir = dir
	cmd.Env = append(baseEnv(home), "MM_BASE_URL="+srv.URL(), "MM_PROVIDER=llamacpp", "MM_MODEL=fake-model")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("acpx mm exec: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Hello from mm.") {
		t.Errorf("acpx output lacks the answer:\n%s", out)
	}
}

// baseEnv is a clean environment: the mm under test first on PATH, a home
// with no user config.
func baseEnv(home string) []string {
	return []string{
		"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"MM_LOG=" + filepath.Join(home, "mm.log"),
	}
}

// initialize starts l as an editor would and checks the initialize answer.
func initialize(t *testing.T, l launch) {
	t.Helper()
	home := t.TempDir()
	env := baseEnv(home)
	for k, v := range l.Env {
		env = append(env, k+"="+v)
	}
	path, err := lookPath(l.Command, env)
	if err != nil {
		t.Fatalf("%s is not on PATH: %v", l.Command, err)
	}
	cmd := exec.Command(path, l.Args...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Errorf("mm did not exit within 10 s of stdin closing")
		}
	}()
	conn := sdk.NewClientSideConnection(client{}, stdin, stdout)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := conn.Initialize(ctx, sdk.InitializeRequest{
		ProtocolVersion:    sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}},
	})
	if err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr.String())
	}
	if res.AgentInfo == nil || res.AgentInfo.Name != "mm" {
		t.Errorf("agentInfo = %+v, want mm", res.AgentInfo)
	}
	if res.ProtocolVersion != sdk.ProtocolVersionNumber {
		t.Errorf("protocolVersion = %d, want %d", res.ProtocolVersion, sdk.ProtocolVersionNumber)
	}
}

// lookPath resolves cmd on the PATH of env, as the editor's spawn would.
func lookPath(cmd string, env []string) (string, error) {
	for _, kv := range env {
		if dirs, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(dirs) {
				p := filepath.Join(d, cmd)
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return p, nil
				}
			}
		}
	}
	return "", exec.ErrNotFound
}

// client answers nothing: initialize asks nothing of the client.
type client struct{}

func (client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}
func (client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}
func (client) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{}, sdk.NewMethodNotFound("session/request_permission")
}
func (client) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }
func (client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}
func (client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}
func (client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}
func (client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}
func (client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

// parseAgentServers reads the Zed-style map {"mm": {command, args, env}}
// under key (Zed and JetBrains: agent_servers; the VS Code ACP Client:
// acp.agents), with encoding/json: no comments, no trailing commas.
func parseAgentServers(key string) func(*testing.T, []byte) launch {
	return func(t *testing.T, src []byte) launch {
		var doc map[string]map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		}
		dec := json.NewDecoder(bytes.NewReader(src))
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("not valid JSON: %v", err)
		}
		mm, ok := doc[key]["mm"]
		if !ok {
			t.Fatalf("no %s.mm entry", key)
		}
		if key == "agent_servers" && mm.Type != "" && mm.Type != "custom" {
			t.Errorf("type = %q, want custom", mm.Type)
		}
		return launch{Command: mm.Command, Args: mm.Args, Env: mm.Env}
	}
}

// parseACPX reads acpx's agents map, whose argv form is the whole command
// line.
func parseACPX(t *testing.T, src []byte) launch {
	var doc struct {
		Agents map[string]struct {
			Argv []string `json:"argv"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(src, &doc); err != nil {
		t.Fatalf("not valid JSON: %v", err)
	}
	argv := doc.Agents["mm"].Argv
	if len(argv) == 0 {
		t.Fatal("no agents.mm.argv")
	}
	return launch{Command: argv[0], Args: argv[1:]}
}

// runLua runs a Neovim config in a real Lua VM where require(name) returns
// the given module tables (the plugins' entry points) and vim is absent, so
// the file may use only plain Lua.
func runLua(t *testing.T, src []byte, modules map[string]*lua.LTable, L *lua.LState) {
	t.Helper()
	L.SetGlobal("require", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		m, ok := modules[name]
		if !ok {
			L.RaiseError("module %q not found", name)
		}
		L.Push(m)
		return 1
	}))
	if err := L.DoString(string(src)); err != nil {
		t.Fatalf("lua: %v", err)
	}
}

// setupModule is a plugin whose setup(opts) keeps opts.
func setupModule(L *lua.LState, got **lua.LTable) *lua.LTable {
	m := L.NewTable()
	m.RawSetString("setup", L.NewFunction(func(L *lua.LState) int {
		*got = L.CheckTable(1)
		return 0
	}))
	return m
}

func luaLaunch(t *testing.T, cmd lua.LValue, envTable lua.LValue) launch {
	t.Helper()
	tbl, ok := cmd.(*lua.LTable)
	if !ok {
		t.Fatalf("command is %s, want a list", cmd.Type())
	}
	var words []string
	tbl.ForEach(func(_, v lua.LValue) { words = append(words, v.String()) })
	if len(words) == 0 {
		t.Fatal("empty command")
	}
	l := launch{Command: words[0], Args: words[1:], Env: map[string]string{}}
	if env, ok := envTable.(*lua.LTable); ok {
		env.ForEach(func(k, v lua.LValue) { l.Env[k.String()] = v.String() })
	}
	return l
}

// parseCodeCompanion runs the config; codecompanion.adapters.extend returns
// the overrides, as the real extend does for the fields mm sets.
func parseCodeCompanion(t *testing.T, src []byte) launch {
	L := lua.NewState()
	defer L.Close()
	var opts *lua.LTable
	adapters := L.NewTable()
	adapters.RawSetString("extend", L.NewFunction(func(L *lua.LState) int {
		L.CheckString(1)
		L.Push(L.CheckTable(2))
		return 1
	}))
	runLua(t, src, map[string]*lua.LTable{"codecompanion": setupModule(L, &opts), "codecompanion.adapters": adapters}, L)
	if opts == nil {
		t.Fatal("setup was not called")
	}
	factory, ok := L.GetField(L.GetField(L.GetField(opts, "adapters"), "acp"), "mm").(*lua.LFunction)
	if !ok {
		t.Fatal("adapters.acp.mm is not a function")
	}
	if err := L.CallByParam(lua.P{Fn: factory, NRet: 1, Protect: true}); err != nil {
		t.Fatalf("adapters.acp.mm(): %v", err)
	}
	adapter := L.Get(-1)
	if got := L.GetField(L.GetField(L.GetField(opts, "interactions"), "chat"), "adapter").String(); got != "mm" {
		t.Errorf("interactions.chat.adapter = %q, want mm", got)
	}
	return luaLaunch(t, L.GetField(L.GetField(adapter, "commands"), "default"), L.GetField(adapter, "env"))
}

// parseAvante runs the config and reads acp_providers.mm.
func parseAvante(t *testing.T, src []byte) launch {
	L := lua.NewState()
	defer L.Close()
	var opts *lua.LTable
	runLua(t, src, map[string]*lua.LTable{"avante": setupModule(L, &opts)}, L)
	if opts == nil {
		t.Fatal("setup was not called")
	}
	if got := L.GetField(opts, "provider").String(); got != "mm" {
		t.Errorf("provider = %q, want mm", got)
	}
	p := L.GetField(L.GetField(opts, "acp_providers"), "mm")
	if p.Type() != lua.LTTable {
		t.Fatal("no acp_providers.mm")
	}
	cmd := L.NewTable()
	cmd.Append(L.GetField(p, "command"))
	L.GetField(p, "args").(*lua.LTable).ForEach(func(_, v lua.LValue) { cmd.Append(v) })
	return luaLaunch(t, cmd, L.GetField(p, "env"))
}

// parseAgentShell reads the Elisp with a reader that balances forms and
// strings, then takes the keyword arguments of agent-shell--make-acp-client.
func parseAgentShell(t *testing.T, src []byte) launch {
	forms, err := readElisp(string(src))
	if err != nil {
		t.Fatalf("elisp: %v", err)
	}
	call := findCall(forms, "agent-shell--make-acp-client")
	if call == nil {
		t.Fatal("no (agent-shell--make-acp-client …) form")
	}
	l := launch{Env: map[string]string{}}
	for i := 1; i+1 < len(call.list); i += 2 {
		key, val := call.list[i], call.list[i+1]
		switch key.atom {
		case ":command":
			l.Command = val.str
		case ":command-params":
			for _, a := range unquote(val).list {
				l.Args = append(l.Args, a.str)
			}
		case ":environment-variables":
			if val.head() != "agent-shell-make-environment-variables" || len(val.list)%2 != 1 {
				t.Fatalf("environment variables: want (agent-shell-make-environment-variables NAME VALUE …)")
			}
			for j := 1; j+1 < len(val.list); j += 2 {
				l.Env[val.list[j].str] = val.list[j+1].str
			}
		}
	}
	if findCall(forms, "add-to-list") == nil {
		t.Error("the config is not added to agent-shell-agent-configs")
	}
	return l
}
