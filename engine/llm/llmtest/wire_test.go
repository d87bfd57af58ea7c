package llmtest_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the response sections of testdata/wire/*.txtar")

// archive is a minimal txtar: a comment, then "-- name --" sections.
type archive struct {
	comment string
	names   []string
	files   map[string]string
}

func parseTxtar(s string) archive {
	a := archive{files: map[string]string{}}
	cur := ""
	var b strings.Builder
	flush := func() {
		if cur == "" {
			a.comment = b.String()
		} else {
			a.files[cur] = b.String()
		}
		b.Reset()
	}
	for _, line := range strings.SplitAfter(s, "\n") {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			cur = strings.TrimSuffix(strings.TrimPrefix(t, "-- "), " --")
			a.names = append(a.names, cur)
			continue
		}
		b.WriteString(line)
	}
	flush()
	return a
}

func (a archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, n := range a.names {
		fmt.Fprintf(&b, "-- %s --\n", n)
		f := a.files[n]
		b.WriteString(f)
		if f != "" && !strings.HasSuffix(f, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestWire replays each testdata/wire/*.txtar: the scenario answers the
// request, and the status line plus body must equal the response section
// byte for byte (go test -update rewrites it).
func TestWire(t *testing.T) {
	files, _ := filepath.Glob("testdata/wire/*.txtar")
	if len(files) == 0 {
		t.Fatal("no testdata/wire/*.txtar")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			a := parseTxtar(string(b))
			sc, err := llmtest.Parse([]byte(a.files["scenario.yaml"]))
			if err != nil {
				t.Fatal(err)
			}
			srv := llmtest.NewServer(sc)
			defer srv.Close()
			resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(a.files["request.json"]))
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprintf("HTTP %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
			if !strings.HasSuffix(got, "\n") {
				got += "\n" // txtar sections end with a newline
			}
			if *update {
				a.files["response"] = got
				if err := os.WriteFile(file, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := a.files["response"]; got != want {
				t.Errorf("response differs (go test -update to accept)\n--- got\n%s\n--- want\n%s", got, want)
			}
			if !bytes.Equal(srv.Requests()[0].Body, []byte(a.files["request.json"])) {
				t.Errorf("recorded body differs from the request")
			}
		})
	}
}
