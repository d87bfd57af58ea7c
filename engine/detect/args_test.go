package detect

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckArgs(t *testing.T) {
	tests := []struct {
		raw     string
		status  ArgsStatus
		args    string
		problem string
	}{
		{`{"command": "ls"}`, ArgsValid, `{"command": "ls"}`, ""},
		{"  \n", ArgsValid, `{}`, ""},
		{``, ArgsValid, `{}`, ""},
		{` {"a":1} `, ArgsValid, `{"a":1}`, ""},
		{`"{\"command\": \"ls\"}"`, ArgsValid, `{"command": "ls"}`, ""},
		{`{"path": "doc.md", "content": "# Title\n\nA long document that was cut`, ArgsTruncated, "", "stops before its end"},
		{`{"command": tru`, ArgsTruncated, "", ""},
		{`{"command": "ls"`, ArgsTruncated, "", ""},
		{`{"command": ls}`, ArgsMalformed, "", "invalid JSON here: {\"command\": ls}"},
		{`{"a":1}{"a":1}`, ArgsMalformed, "", "text after the JSON"},
		{`{"a":1}}`, ArgsMalformed, "", "text after the JSON"},
		{`["ls"]`, ArgsMalformed, "", "not an array"},
		{`"ls -la"`, ArgsMalformed, "", "not a string"},
		{`42`, ArgsMalformed, "", "not a number"},
		{`{'command': 'ls'}`, ArgsMalformed, "", "invalid JSON"},
	}
	for _, tt := range tests {
		c := CheckArgs(tt.raw)
		if c.Status != tt.status || string(c.Args) != tt.args || !strings.Contains(c.Problem, tt.problem) {
			t.Errorf("CheckArgs(%q) = %v %q %q; want %v %q %q", tt.raw, c.Status, c.Args, c.Problem, tt.status, tt.args, tt.problem)
		}
		if c.Status == ArgsValid && c.Problem != "" || c.Status != ArgsValid && (c.Problem == "" || c.Args != nil) {
			t.Errorf("CheckArgs(%q): inconsistent %+v", tt.raw, c)
		}
	}
}

// Arguments cut at every byte: each proper prefix is truncated (or, for
// the empty and blank ones, valid and empty), never malformed; the whole
// is valid. This is what max_tokens does to a call, wherever it lands.
func TestCheckArgsCutAtEveryByte(t *testing.T) {
	for _, whole := range []string{
		`{"path": "notes/plan.md", "content": "# Plan\n\n- read \"main.go\"\n- fix the bug ✓\n", "mode": 420, "append": false, "tags": ["a", null, 1.5e3]}`,
		`{"edits":[{"old":"a\\b","new":"\u00e9\t"}],"dry_run":true}`,
	} {
		if c := CheckArgs(whole); c.Status != ArgsValid {
			t.Fatalf("whole: %+v", c)
		}
		for i := 1; i < len(whole); i++ {
			c := CheckArgs(whole[:i])
			if c.Status != ArgsTruncated {
				t.Fatalf("cut at %d (%q): %v %q", i, whole[:i], c.Status, c.Problem)
			}
		}
	}
}

func TestCharBudget(t *testing.T) {
	for maxTokens, want := range map[int]int{4096: 6000, 16384: 24500, 8192: 12000, 2048: 3000, 800: 1200, 300: 400, 50: 75, 0: 0, -1: 0} {
		if got := CharBudget(maxTokens); got != want {
			t.Errorf("CharBudget(%d) = %d, want %d", maxTokens, got, want)
		}
	}
}

// A measured case: a 12,500-character write_file cut at 4,096
// tokens is truncated, given back twice with the budget, then explained;
// it is never runnable.
func TestBrokenCallPolicy(t *testing.T) {
	content := strings.Repeat("Une phrase du document, assez longue pour peser. ", 260)[:12500]
	full, _ := json.Marshal(map[string]string{"path": "doc.md", "content": content})
	cut := string(full[:len(full)*2/3]) // the server stopped at max_tokens
	c := CheckArgs(cut)
	if c.Status != ArgsTruncated || c.Args != nil {
		t.Fatalf("%+v", c)
	}
	b := BrokenCall{Tool: "write_file", Check: c, MaxTokens: 4096}
	retries := Retries{Max: MaxBrokenCallRetries}
	var notes []string
	for retries.Take() {
		notes = append(notes, b.Note())
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "≈ 6,000 characters at most for 4,096 tokens") || !strings.Contains(notes[0], "edit_file") {
		t.Fatalf("notes %q", notes)
	}
	if e := b.Explain(); !strings.Contains(e, "max_tokens (4096)") || !strings.Contains(e, "sampling.max_tokens") {
		t.Fatalf("explain %q", e)
	}
	retries.Reset()
	if !retries.Take() || retries.Used() != 1 {
		t.Fatal("Reset should give the tries back")
	}
	if (&Retries{}).Take() {
		t.Fatal("the zero Retries allows none")
	}
}

// FuzzCheckArgs: never panics, and a valid verdict always carries one JSON
// object that the engine can run.
func FuzzCheckArgs(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":`, `"{\"a\":1}"`, ``, `[`, `{"a":"\u00`, "{\"a\":\"\xff\"}"} {
		f.Add(s)
	}
	ts := testTools()
	f.Fuzz(func(t *testing.T, raw string) {
		c := CheckArgs(raw)
		if c.Status == ArgsValid {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(c.Args, &m); err != nil || m == nil {
				t.Fatalf("valid verdict with args %q: %v", c.Args, err)
			}
			r := ts.Resolve("str_replace", c.Args)
			if !json.Valid(r.Args) {
				t.Fatalf("Resolve made invalid JSON %q from %q", r.Args, c.Args)
			}
		}
		_ = (BrokenCall{Tool: "bash", Check: c, MaxTokens: len(raw)}).Note()
	})
}
