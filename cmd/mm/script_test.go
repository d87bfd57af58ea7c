package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/internal/testenv"
)

// TestScript runs testdata/script/*.txtar: the few behaviours only a real
// mm process shows — what reaches stdout and stderr as bytes, the exit
// status, stdin read to its end — against the race-built binary TestMain
// made once. Everything else is tested in process, where it is faster
// and can run in parallel.
//
// Beyond testscript's own commands, a script has:
//
//	[!] mm args...   run the binary (also `exec mm …`, which can go to the background)
//	status N         the exit status of the last mm was N
//	fakellm NAME     serve testdata/scenarios/NAME.yaml as the model (MM_BASE_URL)
//	fakellm -closed  a model URL where nothing listens
//	[!] asked TEXT   the first request to the model ended with a message containing TEXT
func TestScript(t *testing.T) {
	t.Parallel()
	mmBinary := mmBin(t)
	scenarios, err := filepath.Abs(filepath.Join("testdata", "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		statuses = map[*testscript.TestScript]int{}
		servers  = map[*testscript.TestScript]*llmtest.Server{}
	)
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			e.Vars = append(e.Vars,
				"PATH="+filepath.Dir(mmBinary)+string(os.PathListSeparator)+os.Getenv("PATH"),
				"HOME="+home,
				"XDG_STATE_HOME="+filepath.Join(home, "state"),
				"MM_LOG="+filepath.Join(home, "mm.log"),
				"MM_PROVIDER=llamacpp",
				"MM_MODEL=fake-model",
			)
			goEnv, err := testenv.PrepareGoHome(home)
			e.Vars = append(e.Vars, goEnv...)
			return err
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mm": func(ts *testscript.TestScript, neg bool, args []string) {
				err := ts.Exec(mmBinary, args...)
				code := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					code = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("mm: %v", err)
				}
				mu.Lock()
				statuses[ts] = code
				mu.Unlock()
				if (code != 0) != neg {
					ts.Fatalf("mm %s: exit %d", strings.Join(args, " "), code)
				}
			},
			"status": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: status N")
				}
				mu.Lock()
				got, ok := statuses[ts]
				mu.Unlock()
				if want, err := strconv.Atoi(args[0]); !ok || err != nil || got != want {
					ts.Fatalf("exit status %d, want %s", got, args[0])
				}
			},
			"fakellm": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: fakellm NAME|-closed")
				}
				if args[0] == "-closed" {
					ts.Setenv("MM_BASE_URL", testenv.RefusedURL(t)+"/v1")
					return
				}
				sc, err := llmtest.Load(filepath.Join(scenarios, args[0]+".yaml"))
				ts.Check(err)
				srv := llmtest.NewServer(sc)
				ts.Defer(srv.Close)
				mu.Lock()
				servers[ts] = srv
				mu.Unlock()
				ts.Setenv("MM_BASE_URL", srv.URL())
			},
			"asked": func(ts *testscript.TestScript, neg bool, args []string) {
				mu.Lock()
				srv := servers[ts]
				mu.Unlock()
				if len(args) != 1 || srv == nil {
					ts.Fatalf("usage: asked TEXT, after fakellm NAME")
				}
				reqs := srv.Requests()
				if len(reqs) == 0 {
					ts.Fatalf("the model was never asked")
				}
				last := reqs[0].Last().Content
				if strings.Contains(last, args[0]) == neg {
					ts.Fatalf("the last message to the model is %q; want it to %scontain %q", last, map[bool]string{true: "not "}[neg], args[0])
				}
			},
		},
	})
}
