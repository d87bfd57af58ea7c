package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLineModeEditSlipRepaired: a model copies read_file's numbered listing
// into old and new; the built binary applies the edit on the first try
// (the numbers are the file's real lines) and the tool result the model
// reads next names the repair and what to send instead.
func TestLineModeEditSlipRepaired(t *testing.T) {
	t.Parallel()
	srv := scenario(t, "slip_edit")
	dir := t.TempDir()
	file := filepath.Join(dir, "greet.go")
	writeFile(t, file, "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello world\")\n}\n")
	stdout, stderr, code := runInProcess(t, dir, mmEnv(t, srv), "", "-p", "Say bye instead of hello world", "--yes")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if stdout != "Changed the greeting.\n" {
		t.Errorf("stdout = %q", stdout)
	}
	want := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"bye world\")\n}\n"
	if got := readFile(t, file); got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	// the listing the model copied is mm's own read_file output
	read := reqs[1].Messages[len(reqs[1].Messages)-1]
	if !strings.Contains(read.Content, "6\t\tfmt.Println(\"hello world\")\n7\t}") {
		t.Errorf("read_file listing = %q", read.Content)
	}
	res := reqs[2].Messages[len(reqs[2].Messages)-1]
	if res.Role != "tool" || !strings.Contains(res.Content, "1 edit applied after removing line-number prefixes from old and new — send the file's text without them") {
		t.Errorf("the tool result the model reads lacks the repair line: %q", res.Content)
	}
	if strings.Contains(res.Content, "[error") {
		t.Errorf("the tool result is a refusal: %q", res.Content)
	}
}
