package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
)

// TestFetchContentSavesWithoutShowing: with fetchContentTool: true the
// model gets fetch_content; a URL typed without its colon is repaired, the
// page is saved as Markdown and the model reads one line, not the page.
// Without the key the tool is not offered.
func TestFetchContentSavesWithoutShowing(t *testing.T) {
	t.Parallel()
	page := webPage(t, "text/html", `<html><body><nav>MENU</nav><main><h1>Hello</h1><p>from the page</p></main><script>x()</script></body></html>`)
	typed := strings.Replace(page.URL, "http://", "http//", 1) + "/hello"
	srv := fetchThen(t, typed, "hello.txt", "Saved the page to hello.txt.")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.yaml")
	testenv.WriteFile(t, cfg, "fetchContentTool: true\n")
	stdout, stderr, code := runInProcess(t, dir, mmEnv(t, srv, "MM_CONFIG="+cfg), "", "-p", "Save "+typed+" to hello.txt, do not show it", "--yes")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if got := readFile(t, filepath.Join(dir, "hello.txt")); !strings.Contains(got, "# Hello") || strings.Contains(got, "MENU") {
		t.Errorf("hello.txt = %q", got)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if !strings.Contains(string(reqs[0].Body), `"fetch_content"`) {
		t.Error("fetch_content was not offered")
	}
	result := reqs[1].Last().Content
	if !strings.HasPrefix(result, "[fetch_content: saved ") || strings.Contains(result, "from the page") {
		t.Errorf("the model got %q, want the one line without the page", result)
	}
	if !strings.Contains(stdout, "Saved the page") {
		t.Errorf("stdout = %q", stdout)
	}

	// Off by default.
	srv2 := scenario(t, "short_answer")
	runInProcess(t, t.TempDir(), mmEnv(t, srv2), "", "-p", "hi")
	if reqs := srv2.Requests(); len(reqs) == 0 || strings.Contains(string(reqs[0].Body), `"fetch_content"`) {
		t.Error("fetch_content is offered without fetchContentTool: true")
	}
}
