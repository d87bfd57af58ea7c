package lsptool

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mm-agent/mm/fileedit/disk"
	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/lspbridge"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/files"
)

// The adapter fits the edit tools' hook.
var _ files.Diagnostics = EditHook{}

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("gopls"); err != nil {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			for _, p := range filepath.SplitList(strings.TrimSpace(string(out))) {
				os.Setenv("PATH", os.Getenv("PATH")+string(os.PathListSeparator)+filepath.Join(p, "bin"))
			}
		}
	}
	os.Exit(m.Run())
}

// env is a disk environment for one workspace directory.
type env struct {
	dir     string
	reads   *tools.ReadTracker
	allow   bool
	asked   []tools.Approval
	written []string
	// onApprove runs while the permission prompt is open: the user at work.
	onApprove func()
}

func (e *env) Cwd() string     { return e.dir }
func (e *env) Roots() []string { return []string{e.dir} }
func (e *env) ReadFile(_ context.Context, p string) ([]byte, error) {
	return os.ReadFile(p)
}
func (e *env) WriteFile(_ context.Context, p string, data []byte, mode fs.FileMode) error {
	e.written = append(e.written, p)
	return disk.WriteAtomic(e.dir, p, data, mode)
}
func (e *env) Approve(_ context.Context, req tools.Approval) (tools.Decision, error) {
	e.asked = append(e.asked, req)
	if e.onApprove != nil {
		e.onApprove()
	}
	if !e.allow {
		return tools.Decision{Allowed: false, Reason: "the user declined"}, nil
	}
	return tools.Decision{Allowed: true}, nil
}
func (e *env) Progress(string)           {}
func (e *env) Reads() *tools.ReadTracker { return e.reads }

// setup copies testdata/query into a workspace and returns the tool, its
// env and the Manager, closed (and checked for leftover processes) at the
// end of the test.
func setup(t *testing.T) (tools.Tool, *env, *lspbridge.Manager) {
	t.Helper()
	testenv.NeedLanguageServer(t, "gopls")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS("testdata/query")); err != nil {
		t.Fatal(err)
	}
	cfg := lspbridge.DefaultConfig()
	cfg.BaseDir = dir
	cfg.Wait = 30 * time.Second // a cold gopls cache takes seconds
	m := lspbridge.New(cfg)
	t.Cleanup(func() {
		if err := m.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	m.Warm(context.Background(), dir)
	return New(Options{Manager: m}), &env{dir: dir, reads: tools.NewReadTracker(), allow: true}, m
}

func call(t *testing.T, tool tools.Tool, e *env, args string) tools.Result {
	t.Helper()
	r, err := tool.Run(context.Background(), e, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDefinitionAndReferencesByName(t *testing.T) {
	tool, e, _ := setup(t)
	r := call(t, tool, e, `{"operation":"definition","path":"main.go","symbol":"greet.Hello"}`)
	want := "definition of greet.Hello:\n  greet/greet.go:5:6: func Hello(name string) string {"
	if r.IsError || r.Text != want {
		t.Errorf("definition:\n%s\nwant:\n%s", r.Text, want)
	}
	if len(r.Locations) != 1 || r.Locations[0] != (tools.Location{Path: filepath.Join(e.dir, "greet", "greet.go"), Line: 5}) {
		t.Errorf("locations = %+v", r.Locations)
	}
	r = call(t, tool, e, `{"operation":"references","path":"greet/greet.go","symbol":"Hello"}`)
	want = "2 references to Hello:\n  main.go:10:20: fmt.Println(greet.Hello(\"world\"))\n  main.go:11:20: fmt.Println(greet.Hello(\"gopher\"))"
	if r.IsError || r.Text != want {
		t.Errorf("references:\n%s\nwant:\n%s", r.Text, want)
	}
	if len(r.Locations) != 2 {
		t.Errorf("locations = %+v", r.Locations)
	}
}

func TestHover(t *testing.T) {
	tool, e, _ := setup(t)
	r := call(t, tool, e, `{"operation":"hover","path":"main.go","symbol":"Hello","line":10}`)
	if r.IsError || !strings.Contains(r.Text, "func greet.Hello(name string) string") || !strings.Contains(r.Text, "Hello returns a greeting for name.") {
		t.Errorf("hover:\n%s", r.Text)
	}
}

func TestSymbols(t *testing.T) {
	tool, e, _ := setup(t)
	r := call(t, tool, e, `{"operation":"symbols","path":"greet/greet.go"}`)
	if r.IsError || r.Text != "greet/greet.go:\n  5: function Hello func(name string) string" {
		t.Errorf("outline:\n%s", r.Text)
	}
	r = call(t, tool, e, `{"operation":"symbols","symbol":"Hello"}`)
	if r.IsError || !strings.Contains(r.Text, "greet/greet.go:5: function Hello") {
		t.Errorf("workspace symbols:\n%s", r.Text)
	}
}

func TestRenameAcrossTwoFiles(t *testing.T) {
	tool, e, _ := setup(t)
	r := call(t, tool, e, `{"operation":"rename","path":"greet/greet.go","symbol":"Hello","new_name":"Greet"}`)
	t.Logf("rename:\n%s", r.Text)
	if r.IsError {
		t.Fatal(r.Text)
	}
	if len(e.asked) != 1 || len(e.asked[0].Diffs) != 2 || e.asked[0].Kind != tools.KindEdit {
		t.Fatalf("approval = %+v", e.asked)
	}
	if len(e.written) != 2 || len(r.Diffs) != 2 {
		t.Errorf("written %v, diffs %d", e.written, len(r.Diffs))
	}
	for _, piece := range []string{
		"renamed Hello to Greet in 2 files:",
		"-5  func Hello(name string) string {", "+5  func Greet(name string) string {",
		`-10  	fmt.Println(greet.Hello("world"))`, `+10  	fmt.Println(greet.Greet("world"))`,
		"gopls: no problems",
	} {
		if !strings.Contains(r.Text, piece) {
			t.Errorf("missing %q", piece)
		}
	}
	main, _ := os.ReadFile(filepath.Join(e.dir, "main.go"))
	if strings.Contains(string(main), "Hello") {
		t.Errorf("main.go not renamed:\n%s", main)
	}
	if !e.reads.Seen(filepath.Join(e.dir, "main.go")) {
		t.Error("renamed files are not recorded as read")
	}
	// The new name resolves.
	r = call(t, tool, e, `{"operation":"definition","path":"main.go","symbol":"Greet"}`)
	if !strings.Contains(r.Text, "greet/greet.go:5:6: func Greet(name string) string {") {
		t.Errorf("definition after rename:\n%s", r.Text)
	}
}

func TestRenameDeclined(t *testing.T) {
	tool, e, _ := setup(t)
	e.allow = false
	before, _ := os.ReadFile(filepath.Join(e.dir, "main.go"))
	r := call(t, tool, e, `{"operation":"rename","path":"greet/greet.go","symbol":"Hello","new_name":"Greet"}`)
	if !r.IsError || !strings.Contains(r.Text, "was not renamed: the user declined") {
		t.Errorf("declined rename:\n%s", r.Text)
	}
	after, _ := os.ReadFile(filepath.Join(e.dir, "main.go"))
	if string(before) != string(after) || len(e.written) != 0 {
		t.Error("a declined rename wrote files")
	}
}

// TestRenameKeepsAUserEdit: a file the user changes
// while the rename's prompt is open is not overwritten, and no file of the
// rename is written.
func TestRenameKeepsAUserEdit(t *testing.T) {
	tool, e, _ := setup(t)
	main := filepath.Join(e.dir, "main.go")
	greet := filepath.Join(e.dir, "greet", "greet.go")
	greetBefore, _ := os.ReadFile(greet)
	var mine []byte
	e.onApprove = func() {
		old, _ := os.ReadFile(main)
		mine = append(old, []byte("\n// the user's note\n")...)
		os.WriteFile(main, mine, 0o644)
	}
	r := call(t, tool, e, `{"operation":"rename","path":"greet/greet.go","symbol":"Hello","new_name":"Greet"}`)
	if !r.IsError || !strings.Contains(r.Text, "main.go changed since you read it") {
		t.Errorf("rename over a user's edit:\n%s", r.Text)
	}
	if got, _ := os.ReadFile(main); string(got) != string(mine) {
		t.Errorf("the user's edit of main.go was overwritten:\n%s", got)
	}
	if got, _ := os.ReadFile(greet); string(got) != string(greetBefore) || len(e.written) != 0 {
		t.Errorf("the refused rename wrote %v", e.written)
	}
}

func TestDiagnosticsAndEditHook(t *testing.T) {
	tool, e, m := setup(t)
	r := call(t, tool, e, `{"operation":"diagnostics"}`)
	if r.IsError || r.Text != "no problems in the workspace" {
		t.Errorf("clean workspace:\n%s", r.Text)
	}
	// An edit through edit_file with the hook reports the error it made.
	edit := findTool(files.New(files.Options{Diagnostics: EditHook{Manager: m}}), "edit_file")
	path := filepath.Join(e.dir, "greet", "greet.go")
	data, _ := os.ReadFile(path)
	e.reads.Record(path, data)
	res, err := edit.Run(context.Background(), e, json.RawMessage(`{"path":"greet/greet.go","edits":[{"old":"return \"hello \" + name","new":"return 42"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("edit_file:\n%s", res.Text)
	if !strings.Contains(res.Text, "gopls: this edit introduced 1 error:\n  greet/greet.go:6:9: cannot use 42") {
		t.Errorf("edit_file result lacks the error:\n%s", res.Text)
	}
	r = call(t, tool, e, `{"operation":"diagnostics","path":"greet"}`)
	if r.IsError || !strings.HasPrefix(r.Text, "1 problem in greet:\n  greet/greet.go:6:9: error: cannot use 42") {
		t.Errorf("diagnostics of greet:\n%s", r.Text)
	}
}

func TestBadArguments(t *testing.T) {
	tool, e, _ := setup(t)
	for args, want := range map[string]string{
		`{"operation":"fly"}`:                                                          `unknown operation "fly"`,
		`{"operation":"references","symbol":"Hello"}`:                                  `needs "path"`,
		`{"operation":"hover","path":"main.go"}`:                                       `needs "symbol"`,
		`{"operation":"rename","path":"main.go","symbol":"main"}`:                      `needs "new_name"`,
		`{"operation":"definition","path":"../../etc/passwd","symbol":"x"}`:            "outside the workspace",
		`{"operation":"definition","path":"main.go","symbol":"Nope"}`:                  `"Nope" does not occur in main.go`,
		`{"operation":"definition","path":"main.go","symbol":"Hello","line":3}`:        `"Hello" is not on line 3 of main.go (it is on line 10, 11)`,
		`{"operation":"definition","path":"go.mod","symbol":"module"}`:                 "no language server for this file",
		`{"operation":"symbols"}`:                                                      `needs "path" of a file`,
		`{"operation":"definition","path":"main.go","symbol":"Hello","x":1}`:           "unknown field",
		`{"operation":"diagnostics","path":"missing/dir"}`:                             "missing/dir does not exist",
		`{"operation":"definition","path":"main.go","line":10,"column":999}`:           "no definition found",
		`{"operation":"references","path":"main.go","line":99,"column":1}`:             "main.go has no line 99",
		`{"operation":"hover","path":"main.go","symbol":"Hello","line":10,"column":1}`: "func greet.Hello",
	} {
		r := call(t, tool, e, args)
		if !strings.Contains(r.Text, want) {
			t.Errorf("%s:\n%s\nwant %q", args, r.Text, want)
		}
	}
}

func findTool(ts []tools.Tool, name string) tools.Tool {
	for _, t := range ts {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// The permission card of a call names the operation, the symbol, the new
// name and the file with its line — the file only when it is inside the
// workspace.
func TestDescribe(t *testing.T) {
	e := &env{dir: t.TempDir(), reads: tools.NewReadTracker()}
	tool := New(Options{})
	c := tool.Describe(e, json.RawMessage(`{"operation":"rename","path":"greet/greet.go","symbol":"Hello","new_name":"Greet","line":5}`))
	if c.Title != "lsp rename Hello → Greet (greet/greet.go)" {
		t.Errorf("title = %q", c.Title)
	}
	if len(c.Locations) != 1 || c.Locations[0].Path != filepath.Join(e.dir, "greet", "greet.go") || c.Locations[0].Line != 5 {
		t.Errorf("locations = %+v", c.Locations)
	}
	if c := tool.Describe(e, json.RawMessage(`{"operation":"hover","path":"../../etc/passwd","symbol":"root"}`)); len(c.Locations) != 0 {
		t.Errorf("a path outside the workspace is shown as a location: %+v", c.Locations)
	}
	if c := tool.Describe(e, json.RawMessage(`{"operation":"diagnostics"}`)); c.Title != "lsp diagnostics" || len(c.Locations) != 0 {
		t.Errorf("diagnostics of the workspace: %+v", c)
	}
}

// A command that changes a Go file behind the editor's back (bash, here a
// tool that writes the file itself) gets the errors it introduced
// appended to its result, as an edit does.
func TestCommandHookReportsWhatACommandBroke(t *testing.T) {
	_, e, m := setup(t)
	greet := filepath.Join(e.dir, "greet", "greet.go")
	// The copied fixture is dated back, as an old checkout: only what the
	// command writes is newer than its start.
	old := time.Now().Add(-time.Hour)
	_ = filepath.WalkDir(e.dir, func(p string, _ fs.DirEntry, _ error) error { return os.Chtimes(p, old, old) })
	// main.go checked first: gopls has loaded the module (greet.go itself
	// stays unopened, as a file only a command touched).
	if r := call(t, New(Options{Manager: m}), e, `{"operation":"diagnostics","path":"main.go"}`); r.Text != "no problems in main.go" {
		t.Fatalf("main.go before the command:\n%s", r.Text)
	}
	command := tools.New(tools.Spec[struct{}]{
		Name: "bash", Kind: tools.KindExecute, Caps: tools.RunsPrograms,
		Run: func(context.Context, tools.Env, struct{}) (tools.Result, error) {
			data, _ := os.ReadFile(greet)
			err := os.WriteFile(greet, []byte(strings.Replace(string(data), `return "hello " + name`, "return 42", 1)), 0o644)
			return tools.Result{Text: "[exit code: 0]\n"}, err
		},
	})
	res, err := CommandHook{Tool: command, Manager: m}.Run(context.Background(), e, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("command result:\n%s", res.Text)
	if !strings.HasPrefix(res.Text, "[exit code: 0]\ngopls: this command introduced 1 error:") || !strings.Contains(res.Text, "greet/greet.go:6:9: cannot use 42") {
		t.Errorf("the command's result lacks the error it made:\n%s", res.Text)
	}
}
