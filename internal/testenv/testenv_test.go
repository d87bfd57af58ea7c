package testenv_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mm-agent/mm/internal/testenv"
)

// stopper records how a helper stopped the test; Fatal and Skip end the
// caller (as the real ones do through runtime.Goexit) by a panic that
// outcome recovers.
type stopper struct {
	testing.TB
	how, msg string
}

func (s *stopper) Helper() {}
func (s *stopper) Fatalf(f string, a ...any) {
	s.how, s.msg = "fail", fmt.Sprintf(f, a...)
	panic(s)
}
func (s *stopper) Skip(a ...any) {
	s.how, s.msg = "skip", fmt.Sprint(a...)
	panic(s)
}

func outcome(f func(t testing.TB)) (s *stopper) {
	s = &stopper{how: "ran"}
	defer func() {
		if r := recover(); r != nil && r != any(s) {
			panic(r)
		}
	}()
	f(s)
	return s
}

func TestMissingToolSkipsOrFails(t *testing.T) {
	for _, tc := range []struct {
		require, want string
	}{
		{"", "skip"},
		{"0", "skip"},
		{"1", "fail"},
	} {
		t.Run("MM_REQUIRE_INTEGRATION="+tc.require, func(t *testing.T) {
			t.Setenv("MM_REQUIRE_INTEGRATION", tc.require)
			s := outcome(func(tb testing.TB) { testenv.NeedTool(tb, "mm-no-such-tool") })
			if s.how != tc.want || !strings.Contains(s.msg, "mm-no-such-tool is not on PATH") || !strings.Contains(s.msg, "install it") {
				t.Errorf("got %s %q, want %s naming the tool and how to install it", s.how, s.msg, tc.want)
			}
		})
	}
}

func TestPresentToolRuns(t *testing.T) {
	t.Setenv("MM_REQUIRE_INTEGRATION", "1")
	var p string
	s := outcome(func(tb testing.TB) { p = testenv.NeedTool(tb, "go") })
	if s.how != "ran" || !strings.HasSuffix(p, "go") {
		t.Errorf("got %s %q, path %q: want the path of go", s.how, s.msg, p)
	}
}

// A home prepared by GoHome has Go telemetry off — so no sidecar outlives
// the test there — and shares the runner's build cache.
func TestGoHome(t *testing.T) {
	testenv.NeedTool(t, "go")
	home := t.TempDir()
	env := append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, testenv.GoHome(t, home)...)
	cmd := exec.Command("go", "env", "GOTELEMETRY", "GOCACHE")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(out))
	if len(got) != 2 || got[0] != "off" || strings.HasPrefix(got[1], home) {
		t.Errorf("go env in the test home: %q, want telemetry off and the runner's cache", got)
	}
}
