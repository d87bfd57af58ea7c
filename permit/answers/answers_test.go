package answers_test

import (
	"path/filepath"
	"testing"

	"github.com/mm-agent/mm/permit/answers"
)

func TestRemember(t *testing.T) {
	dir := t.TempDir()
	s := answers.Open(func(ws string) string { return filepath.Join(dir, filepath.Base(ws)+".json") }, nil)
	ws := "/home/u/proj"
	if g := s.Load(ws); len(g) != 0 {
		t.Fatalf("fresh answers = %v", g)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Remember(ws, answers.Answer{Tool: "bash", Key: "go test", Allowed: true}))
	must(s.Remember(ws, answers.Answer{Tool: "write_file", Key: "write_file", Allowed: false}))
	must(s.Remember(ws, answers.Answer{Tool: "bash", Key: "go test", Allowed: false})) // replaced
	g := s.Load(ws)
	if len(g) != 2 || g[0].Key != "write_file" || g[1] != (answers.Answer{Tool: "bash", Key: "go test", Allowed: false}) {
		t.Errorf("answers = %+v", g)
	}
	if g := s.Load("/home/u/other"); len(g) != 0 {
		t.Errorf("another workspace sees %v", g)
	}
}
