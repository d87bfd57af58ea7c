package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm/llmtest"
)

func TestServePrintsURLFirstAndStopsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		code := serve(ctx, ln, llmtest.Scenario{Loop: true, Steps: []llmtest.Step{{Content: "hi"}}}, pw, io.Discard)
		pw.Close()
		done <- code
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/v1") {
		t.Fatalf("first line %q", url)
	}
	for range 2 { // -loop: the one step answers again
		resp, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), `"content":"hi"`) {
			t.Fatalf("answer %s", b)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("steps:\n  - contnet: x\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "usage: fakellm -scenario FILE"},
		{[]string{"-scenario", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"-scenario", bad}, "line 2"},
		{[]string{"-bogus"}, "flag provided but not defined"},
	} {
		var stderr bytes.Buffer
		if code := run(tc.args, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("run(%q) = %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
