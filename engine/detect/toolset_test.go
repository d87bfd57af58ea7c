package detect

import (
	"encoding/json"
	"testing"
)

func TestResolve(t *testing.T) {
	ts := testTools()
	tests := []struct {
		name, args       string
		wantName         string
		wantArgs         string
		renamed, changed bool
		unknown          bool
	}{
		{"bash", `{"command": "ls"}`, "bash", `{"command": "ls"}`, false, false, false},
		{"shell", `{"command": "ls"}`, "bash", `{"command": "ls"}`, true, false, false},
		{"run_command", `{"command": "ls"}`, "bash", `{"command": "ls"}`, true, false, false},
		{"execute", `{"command": "ls"}`, "bash", `{"command": "ls"}`, true, false, false},
		{"run", `{"command": "ls"}`, "bash", `{"command": "ls"}`, true, false, false},
		// cmd is a schema error, left for the tool to report.
		{"bash", `{"cmd": "ls"}`, "bash", `{"cmd": "ls"}`, false, false, false},
		{"read_file", `{"file_path": "a.go"}`, "read_file", `{"path":"a.go"}`, false, true, false},
		// Claude Code's Edit, through the alias and the flat fields.
		{"str_replace", `{"file_path": "a.go", "old_string": "x := 1", "new_string": "x := 2"}`,
			"edit_file", `{"edits":[{"new":"x := 2","old":"x := 1"}],"path":"a.go"}`, true, true, false},
		{"apply_edit", `{"path": "a.go", "old_str": "<a>", "new_str": "<b>"}`,
			"edit_file", `{"edits":[{"new":"<b>","old":"<a>"}],"path":"a.go"}`, true, true, false},
		{"edit_file", `{"path": "a.go", "edits": [{"old_string": "a", "new_string": "b"}, {"old": "c", "new": "d"}]}`,
			"edit_file", `{"edits":[{"new":"b","old":"a"},{"new":"d","old":"c"}],"path":"a.go"}`, false, true, false},
		// A key whose target is present is left alone.
		{"read_file", `{"path": "a.go", "file_path": "b.go"}`, "read_file", `{"path": "a.go", "file_path": "b.go"}`, false, false, false},
		// Not an object: passed through for the tool to report.
		{"edit_file", `[1,2]`, "edit_file", `[1,2]`, false, false, false},
		{"python", `{"code": "1"}`, "python", `{"code": "1"}`, false, false, true},
	}
	for _, tt := range tests {
		r := ts.Resolve(tt.name, json.RawMessage(tt.args))
		if r.Name != tt.wantName || string(r.Args) != tt.wantArgs || r.Renamed != tt.renamed || r.ArgsChanged != tt.changed || r.Unknown != tt.unknown {
			t.Errorf("Resolve(%s, %s) = %+v (args %s)", tt.name, tt.args, r, r.Args)
		}
		if r.Unknown != (r.Note != "") {
			t.Errorf("Resolve(%s): note %q", tt.name, r.Note)
		}
	}
}

// An alias applies only when its target is offered this turn.
func TestResolveOnlyToOfferedTools(t *testing.T) {
	ts := NewToolset(ToolInfo{Name: "read_file"}, ToolInfo{Name: "plan"})
	r := ts.Resolve("shell", json.RawMessage(`{"command":"ls"}`))
	want := `[error: there is no tool named "shell"; your tools are: plan, read_file]`
	if !r.Unknown || r.Note != want {
		t.Fatalf("%+v", r)
	}
	if ts.Known("shell") || !ts.Known("read") || !ts.Has("plan") || ts.Has("read") {
		t.Fatal("Known/Has")
	}
	// With no schema, arguments are never touched.
	if r := ts.Resolve("read_file", json.RawMessage(`{"file_path":"a"}`)); r.ArgsChanged {
		t.Fatalf("%+v", r)
	}
	var none *Toolset
	if none.Len() != 0 || none.Known("bash") || none.Names() != nil {
		t.Fatal("a nil Toolset offers nothing")
	}
	if r := NewToolset().Resolve("bash", nil); !r.Unknown || r.Note != `[error: there is no tool named "bash"; no tools are available now — answer in text]` {
		t.Fatalf("%+v", r)
	}
}

func TestToolsetParamType(t *testing.T) {
	ts := testTools()
	for _, tt := range []struct{ tool, param, want string }{
		{"bash", "timeout", "integer"}, {"bash", "command", "string"}, {"edit_file", "edits", "array"},
		{"edit_file", "dry_run", "boolean"}, {"bash", "nope", ""}, {"nope", "x", ""},
	} {
		if got := ts.ParamType(tt.tool, tt.param); got != tt.want {
			t.Errorf("ParamType(%s, %s) = %q", tt.tool, tt.param, got)
		}
	}
	if bad := NewToolset(ToolInfo{"x", json.RawMessage(`not json`)}, ToolInfo{"x", nil}, ToolInfo{"", nil}); bad.Len() != 1 {
		t.Fatal("a bad schema keeps the tool; duplicates and empty names are dropped")
	}
}
