package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/permit/runlater"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/workspace"
)

const article = `<!doctype html><html><head><title>Docs</title>
<script>window.track = function () { document.write("TRACKING") }</script>
<style>body { color: red }</style></head>
<body>
<header role="banner"><a href="/">Home</a></header>
<nav><ul><li><a href="/a">MENU-A</a></li><li><a href="/b">MENU-B</a></li></ul></nav>
<div id="cookie-banner" class="cookie-consent">We use COOKIES. <button>Accept all</button></div>
<div class="ad-slot">BUY NOW</div>
<main>
<h1>Getting started</h1>
<p>Install it with <code>go install</code>, then read the <a href="/guide">guide</a>.</p>
<ul><li>fast</li><li>small</li></ul>
</main>
<aside>RELATED POSTS</aside>
<footer>FOOTER 2026</footer>
<script>console.log("LATE SCRIPT")</script>
</body></html>`

// site is a local web server with the pages of the tests.
func site(t *testing.T, robots string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		if robots == "" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, robots)
	})
	mux.HandleFunc("/docs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, article)
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><nav>only a menu</nav><script>x()</script></body></html>`)
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<p>" + strings.Repeat("x", MaxBytes+10) + "</p>"))
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/docs", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/private/page", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<p>secret</p>") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func env(t *testing.T, allow bool) (tools.Env, string) {
	dir := t.TempDir()
	var deny []string
	if !allow {
		deny = []string{"fetch_content:*"}
	}
	ws, err := workspace.New(workspace.Options{Cwd: dir, Policy: permit.NewPolicy(allow, nil, deny)})
	if err != nil {
		t.Fatal(err)
	}
	return ws, dir
}

func call(t *testing.T, e tools.Env, args map[string]any) tools.Result {
	t.Helper()
	b, _ := json.Marshal(args)
	res, err := New(Options{}).Run(context.Background(), e, b)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestFetchConvertsWithoutClutter(t *testing.T) {
	srv := site(t, "")
	e, _ := env(t, true)
	res := call(t, e, map[string]any{"url": srv.URL + "/docs"})
	if res.IsError {
		t.Fatalf("error: %s", res.Text)
	}
	testenv.WantIn(t, "markdown", res.Text, "# Getting started", "`go install`", "[guide]("+srv.URL+"/guide)", "- fast")
	for _, junk := range []string{"TRACKING", "LATE SCRIPT", "color: red", "MENU-A", "COOKIES", "Accept all", "BUY NOW", "RELATED", "FOOTER"} {
		if strings.Contains(res.Text, junk) {
			t.Errorf("markdown keeps %q:\n%s", junk, res.Text)
		}
	}
}

func TestFetchSavesToOutput(t *testing.T) {
	srv := site(t, "")
	e, dir := env(t, true)
	res := call(t, e, map[string]any{"url": srv.URL + "/moved", "output": "hello.txt"})
	if res.IsError || !strings.HasPrefix(res.Text, "[fetch_content: saved ") || !strings.HasSuffix(res.Text, "to hello.txt — the content is not shown]") {
		t.Fatalf("result = %q, want the one line", res.Text)
	}
	b, err := os.ReadFile(filepath.Join(dir, "hello.txt"))
	if err != nil || !strings.Contains(string(b), "# Getting started") {
		t.Errorf("hello.txt = %q, %v", b, err)
	}
	if strings.Contains(res.Text, "Getting started") {
		t.Error("the content was shown although it was saved")
	}
}

func TestFetchFailures(t *testing.T) {
	srv := site(t, "User-agent: *\nDisallow: /private/\n")
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"empty url", map[string]any{"url": " "}, "error 3 (invalid argument)"},
		{"ftp", map[string]any{"url": "ftp://example.com/x"}, "error 3 (invalid argument) — only http and https"},
		{"file", map[string]any{"url": "file:///etc/passwd"}, "error 3"},
		{"output outside", map[string]any{"url": srv.URL + "/docs", "output": "../../x.md"}, "error 3"},
		{"robots", map[string]any{"url": srv.URL + "/private/page"}, "error 2 (unreachable) — the site's robots.txt does not allow fetching /private/page"},
		{"404", map[string]any{"url": srv.URL + "/nope"}, "error 2 (unreachable) — the server answered HTTP 404"},
		{"unreachable", map[string]any{"url": "http://127.0.0.1:1/"}, "error 2 (unreachable)"},
		{"redirect loop", map[string]any{"url": srv.URL + "/loop"}, "more than 5 redirects"},
		{"image", map[string]any{"url": srv.URL + "/image.png"}, "error 1 (not convertible) — the page is image/png"},
		{"too big", map[string]any{"url": srv.URL + "/big"}, "error 1 (not convertible) — the page is larger than 4 MiB"},
		{"empty page", map[string]any{"url": srv.URL + "/empty", "output": "e.md"}, "error 1 (not convertible) — the page has no text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, dir := env(t, true)
			res := call(t, e, c.args)
			if !res.IsError || !strings.HasPrefix(res.Text, "[fetch_content: error ") || !strings.Contains(res.Text, c.want) {
				t.Errorf("result = %q, want an error containing %q", res.Text, c.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "e.md")); err == nil {
				t.Error("an empty page was saved")
			}
		})
	}
}

func TestFetchAsksPermission(t *testing.T) {
	srv := site(t, "")
	e, _ := env(t, false)
	res := call(t, e, map[string]any{"url": srv.URL + "/docs"})
	if !res.IsError || !strings.Contains(res.Text, "not fetched") {
		t.Errorf("result = %q, want the refusal", res.Text)
	}
}

func TestRepair(t *testing.T) {
	for in, want := range map[string]string{
		"k33g.org":                "https://k33g.org",
		"https//k33g.org":         "https://k33g.org",
		"https:/k33g.org/a":       "https://k33g.org/a",
		"http//example.com/x?y=1": "http://example.com/x?y=1",
		"HTTPS://Example.com":     "https://Example.com",
		"//example.com/p":         "https://example.com/p",
		`"https://example.com"`:   "https://example.com",
		"<https://example.com/>":  "https://example.com/",
		"localhost:8080/docs":     "https://localhost:8080/docs",
		"https://example.com":     "https://example.com",
	} {
		if got, err := Repair(in); err != nil || got != want {
			t.Errorf("Repair(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://x.org", "just some words", "mailto:a@b.c"} {
		if got, err := Repair(bad); err == nil {
			t.Errorf("Repair(%q) = %q, want an error", bad, got)
		}
	}
}

func TestTruncateKeepsHeadAndTail(t *testing.T) {
	s := strings.Repeat("é", 5000)
	got := truncate("HEAD"+s+"TAIL", 1000)
	if !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "characters cut") || len(got) > 1200 {
		t.Errorf("truncate kept %d bytes: %.40q … %.40q", len(got), got, got[len(got)-40:])
	}
}

// TestFetchSaveReadsFirst: a save over an existing file goes through the
// same read-before-write as write_file — refused, before any request,
// while the file has not been read; written once it has.
func TestFetchSaveReadsFirst(t *testing.T) {
	srv := site(t, "")
	e, dir := env(t, true)
	path := filepath.Join(dir, "notes.md")
	os.WriteFile(path, []byte("mine\n"), 0o644)
	res := call(t, e, map[string]any{"url": srv.URL + "/docs", "output": "notes.md"})
	if !res.IsError || !strings.Contains(res.Text, "read") {
		t.Errorf("result = %q, want the read-first refusal", res.Text)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine\n" {
		t.Fatalf("an unread file was overwritten: %q", b)
	}
	e.Reads().Record(path, []byte("mine\n"))
	if res := call(t, e, map[string]any{"url": srv.URL + "/docs", "output": "notes.md"}); res.IsError {
		t.Errorf("after a read: %q", res.Text)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "Getting started") {
		t.Errorf("notes.md = %q", b)
	}
}

// TestFetchRedirectToAnotherHostAsks: a redirect to another host (here
// another port of loopback) is asked like a first request; refused, no
// request reaches it.
func TestFetchRedirectToAnotherHostAsks(t *testing.T) {
	hits := 0
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		fmt.Fprint(w, "<html><body><main>internal</main></body></html>")
	}))
	defer b.Close()
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+"/admin", http.StatusFound)
	}))
	defer a.Close()
	dir := t.TempDir()
	var asked []string
	policy := permit.NewPolicy(false, []string{"fetch_content:" + a.URL + "*"}, nil)
	ws, err := workspace.New(workspace.Options{Cwd: dir, Policy: policy, Ask: func(_ context.Context, r tools.Approval) (permit.Answer, error) {
		asked = append(asked, r.Title)
		return permit.RejectOnce, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	res := call(t, ws, map[string]any{"url": a.URL + "/start"})
	if !res.IsError || !strings.Contains(res.Text, "redirects to "+b.URL+"/admin") {
		t.Errorf("result = %q", res.Text)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], b.URL+"/admin (redirected from "+a.URL+"/start)") {
		t.Errorf("questions: %q", asked)
	}
	if hits != 0 {
		t.Errorf("the other host got %d requests", hits)
	}
}

// TestFetchOutputThatRunsLaterIsAsked: saving a page as a file that runs
// later (.envrc, a git hook) is asked even in yolo and with an "always"
// answer for the host, the question naming the file; with no one to ask
// it is refused and nothing is saved. An ordinary output is not asked.
func TestFetchOutputThatRunsLaterIsAsked(t *testing.T) {
	srv := site(t, "")
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755)
	var asked []string
	ask := func(_ context.Context, r tools.Approval) (permit.Answer, error) {
		asked = append(asked, r.Title)
		return permit.RejectOnce, nil
	}
	for _, who := range []permit.Asker{ask, nil} {
		policy := permit.NewPolicy(true, nil, nil)
		policy.WatchRunLater(&runlater.RunLater{Root: dir})
		ws, err := workspace.New(workspace.Options{Cwd: dir, Policy: policy, Ask: who})
		if err != nil {
			t.Fatal(err)
		}
		host := strings.TrimPrefix(srv.URL, "http://")
		policy.Remember(tools.Approval{Tool: "fetch_content", Key: host}, true)
		asked = nil
		for _, out := range []string{".envrc", ".git/hooks/pre-commit"} {
			res := call(t, ws, map[string]any{"url": srv.URL + "/docs", "output": out})
			if !res.IsError || !strings.Contains(res.Text, "not fetched") {
				t.Errorf("%s: result = %q, want it not fetched", out, res.Text)
			}
			if who == nil && !strings.Contains(res.Text, out+" runs later") {
				t.Errorf("%s with no one to ask: %q, want it to say the file runs later", out, res.Text)
			}
			if _, err := os.Stat(filepath.Join(dir, out)); err == nil {
				t.Errorf("%s saved", out)
			}
		}
		if who != nil && (len(asked) != 2 || !strings.Contains(asked[0], "⚠ .envrc runs later") || !strings.Contains(asked[1], "⚠ .git/hooks/pre-commit runs later")) {
			t.Errorf("questions: %q, want both saves asked", asked)
		}
		n := len(asked)
		if res := call(t, ws, map[string]any{"url": srv.URL + "/docs", "output": "page.md"}); res.IsError || len(asked) != n {
			t.Errorf("an ordinary output: %q, asked %q", res.Text, asked[n:])
		}
		os.Remove(filepath.Join(dir, "page.md"))
	}
}
