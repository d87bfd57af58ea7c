package shell

import (
	"path/filepath"
	"testing"

	"github.com/mm-agent/mm/tools"
)

// fakeEnv is a session reduced to what the analysis reads: a working
// directory that is the workspace.
type fakeEnv struct {
	tools.Env // methods the analysis never calls stay nil
	cwd       string
}

func newEnv(t *testing.T) *fakeEnv {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &fakeEnv{cwd: dir}
}

func (e *fakeEnv) Cwd() string     { return e.cwd }
func (e *fakeEnv) Roots() []string { return []string{e.cwd} }
