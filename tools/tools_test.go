package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/tools"
)

func TestPolicy(t *testing.T) {
	bash := func(cmd string) tools.Approval {
		return tools.Approval{Tool: "bash", Caps: tools.RunsPrograms, Key: strings.Fields(cmd)[0], Subject: cmd}
	}
	p := permit.NewPolicy(false, []string{"bash:git status*", "edit_file"}, []string{"bash:rm *"})
	tests := []struct {
		a               tools.Approval
		decided, allows bool
	}{
		{bash("git status --short"), true, true},
		{bash("git push"), false, false},
		{bash("rm -rf build"), true, false},
		{tools.Approval{Tool: "edit_file", Caps: tools.WritesWorkspace, Key: "edit_file", Subject: "a.go"}, true, true},
		{tools.Approval{Tool: "write_file", Caps: tools.WritesWorkspace, Key: "write_file", Subject: "a.go"}, false, false},
	}
	for _, tt := range tests {
		d, ok := p.Decide(tt.a)
		if ok != tt.decided || d.Allowed != tt.allows {
			t.Errorf("%s %q: decided=%v allowed=%v (%s)", tt.a.Tool, tt.a.Subject, ok, d.Allowed, d.Reason)
		}
	}
	p.Remember(bash("go test"), true)
	if d, ok := p.Decide(bash("go test ./...")); !ok || !d.Allowed {
		t.Errorf("always not remembered")
	}
	// A user's "never" wins over an allow rule and over yolo.
	y := permit.NewPolicy(true, []string{"bash"}, nil)
	y.Remember(bash("curl x"), false)
	if d, ok := y.Decide(bash("curl y")); !ok || d.Allowed {
		t.Errorf("never overridden: %+v", d)
	}
	if d, ok := y.Decide(bash("ls")); !ok || !d.Allowed {
		t.Errorf("yolo: %+v", d)
	}
	// A deny rule wins over yolo.
	if d, ok := permit.NewPolicy(true, nil, []string{"bash:rm *"}).Decide(bash("rm -rf /tmp/x")); !ok || d.Allowed {
		t.Errorf("deny under yolo: %+v", d)
	}
}

type env struct{ dir string }

func (e env) Cwd() string                                                  { return e.dir }
func (e env) Roots() []string                                              { return []string{e.dir} }
func (e env) ReadFile(_ context.Context, p string) ([]byte, error)         { return os.ReadFile(p) }
func (e env) WriteFile(context.Context, string, []byte, fs.FileMode) error { return nil }
func (e env) Approve(context.Context, tools.Approval) (tools.Decision, error) {
	return tools.Decision{}, nil
}
func (e env) Progress(string)           {}
func (e env) Reads() *tools.ReadTracker { return nil }

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(dir, "escape"))
	os.Mkdir(filepath.Join(dir, "in"), 0o755)
	e := env{dir}
	tests := []struct {
		path, err string
	}{
		{"a.go", ""},
		{"in/new/file.go", ""},
		{filepath.Join(dir, "in"), ""},
		{"../x", "outside the workspace"},
		{"/etc/passwd", "outside the workspace"},
		{"escape/secret", "outside the workspace"},
		{"", `"path" is empty`},
	}
	for _, tt := range tests {
		_, err := tools.Resolve(e, tt.path)
		if (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("Resolve(%q) = %v, want %q", tt.path, err, tt.err)
		}
	}
}

type nested struct {
	Path  string `json:"path" desc:"the file"`
	Edits []struct {
		Old string `json:"old"`
		New string `json:"new"`
	} `json:"edits"`
	DryRun bool   `json:"dry_run,omitempty"`
	Mode   string `json:"mode,omitempty" enum:"a,b"`
}

func TestTypedSchemaAndDecoding(t *testing.T) {
	tool := tools.New(tools.Spec[nested]{
		Name: "t", Description: "d", Kind: tools.KindEdit, Caps: tools.WritesWorkspace,
		Run: func(_ context.Context, _ tools.Env, p nested) (tools.Result, error) {
			return tools.Result{Text: p.Path + ":" + p.Edits[0].New}, nil
		},
	})
	want := `{"type":"object","properties":{"path":{"type":"string","description":"the file"},"edits":{"type":"array","items":{"type":"object","properties":{"old":{"type":"string"},"new":{"type":"string"}},"required":["old","new"]}},"dry_run":{"type":"boolean"},"mode":{"type":"string","enum":["a","b"]}},"required":["path","edits"]}`
	if string(tool.Schema()) != want {
		t.Errorf("schema:\n%s\nwant\n%s", tool.Schema(), want)
	}
	if !json.Valid(tool.Schema()) {
		t.Error("schema is not JSON")
	}
	tests := []struct{ args, want string }{
		{`{"path":"a","edits":[{"old":"x","new":"y"}]}`, "a:y"},
		{`{"path":"a"}`, `[error: invalid arguments for t: missing "edits" — expected {path, edits:[{old, new}], dry_run?, mode?}]`},
		{`{"path":"a","edits":[],"cmd":1}`, `unknown field "cmd"`},
		{`{"path":1,"edits":[]}`, `"path" must be a string, not number`},
		{`{"path":"a","edits":[{"old":"x","new":"y"}`, `the arguments must be one JSON object`},
	}
	for _, tt := range tests {
		res, err := tool.Run(context.Background(), nil, json.RawMessage(tt.args))
		if err != nil || !strings.Contains(res.Text, tt.want) {
			t.Errorf("Run(%s) = %q, %v; want %q", tt.args, res.Text, err, tt.want)
		}
	}
}

func TestReadTracker(t *testing.T) {
	r := tools.NewReadTracker()
	if msg := r.Check("/a", "a", []byte("x")); !strings.Contains(msg, "read_file") {
		t.Errorf("unread: %q", msg)
	}
	r.Record("/a", []byte("x"))
	if msg := r.Check("/a", "a", []byte("x")); msg != "" {
		t.Errorf("read: %q", msg)
	}
	if msg := r.Check("/a", "a", []byte("y")); !strings.Contains(msg, "read it again") {
		t.Errorf("changed: %q", msg)
	}
}

// TestPolicyApprove: the one permission flow — what each answer decides,
// what is remembered, and what happens when no one can be asked.
func TestPolicyApprove(t *testing.T) {
	ctx := context.Background()
	req := func(key string) tools.Approval {
		return tools.Approval{Tool: "bash", Caps: tools.RunsPrograms, Key: key, Subject: key}
	}
	answer := func(a permit.Answer) permit.Asker {
		return func(context.Context, tools.Approval) (permit.Answer, error) { return a, nil }
	}
	for _, tc := range []struct {
		answer          permit.Answer
		allowed, sticks bool
		reason          string
	}{
		{permit.AllowOnce, true, false, "the user allowed it"},
		{permit.AllowAlways, true, true, "the user allowed it, and always in this workspace"},
		{permit.RejectOnce, false, false, "the user declined"},
		{permit.RejectAlways, false, true, "the user declined, for good in this workspace"},
	} {
		p := permit.NewPolicy(false, nil, nil)
		d, err := p.Approve(ctx, req("make"), answer(tc.answer))
		if err != nil || d.Allowed != tc.allowed || d.Reason != tc.reason {
			t.Errorf("answer %d: %+v %v", tc.answer, d, err)
		}
		asked := false
		d2, _ := p.Approve(ctx, req("make"), func(context.Context, tools.Approval) (permit.Answer, error) {
			asked = true
			return permit.AllowOnce, nil
		})
		if asked == tc.sticks || (tc.sticks && d2.Allowed != tc.allowed) {
			t.Errorf("answer %d: asked again=%v, second decision %+v", tc.answer, asked, d2)
		}
	}
	p := permit.NewPolicy(false, nil, nil)
	if d, err := p.Approve(ctx, req("ls"), nil); err != nil || d.Allowed || !strings.Contains(d.Reason, "--yes") {
		t.Errorf("nil asker: %+v %v", d, err)
	}
	noEditor := func(context.Context, tools.Approval) (permit.Answer, error) {
		return 0, fmt.Errorf("%w: no editor is connected", permit.ErrNoOneToAsk)
	}
	if d, err := p.Approve(ctx, req("ls"), noEditor); err != nil || d.Allowed || !strings.Contains(d.Reason, "no editor") {
		t.Errorf("no one to ask: %+v %v", d, err)
	}
	cut := func(context.Context, tools.Approval) (permit.Answer, error) {
		return permit.AllowOnce, context.Canceled
	}
	if _, err := p.Approve(ctx, req("ls"), cut); !errors.Is(err, context.Canceled) {
		t.Errorf("a cut question gives %v", err)
	}
	// Yolo decides without asking.
	if d, _ := permit.NewPolicy(true, nil, nil).Approve(ctx, req("ls"), nil); !d.Allowed {
		t.Errorf("yolo: %+v", d)
	}
}
