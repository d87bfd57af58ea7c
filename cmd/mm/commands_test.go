package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/internal/testenv"
)

// runTable runs `mm args…` in process in a fresh home and workspace,
// with no model server, and returns stdout, stderr and the exit code.
func runTable(t *testing.T, hide func([]string), stdin string, args ...string) (string, string, int) {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	vars := config.Env{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"MM_LOG=" + filepath.Join(home, "mm.log"), "MM_PROVIDER=llamacpp", "MM_MODEL=fake-model", "MM_BASE_URL=" + testenv.RefusedURL(t) + "/v1"}
	var out, errb bytes.Buffer
	code := run(testenv.Context(t), environment{vars: vars, dir: dir, hide: hide}, args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// TestHelpListsEveryCommand: `mm --help` lists each command a user runs,
// one line each with what it does, as `go help` does; the internal ones
// stay out.
func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runTable(t, nil, "", "--help")
	if code != exitcode.OK || stderr != "" {
		t.Fatalf("mm --help: exit %d, stderr %q", code, stderr)
	}
	for _, c := range commands {
		name := c.name
		if name == "" {
			name = "(none)"
		}
		line := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + ` +` + regexp.QuoteMeta(c.short) + `$`)
		switch {
		case c.internal && strings.Contains(stdout, c.name):
			t.Errorf("mm --help shows the internal command %q:\n%s", c.name, stdout)
		case !c.internal && (c.short == "" || !line.MatchString(stdout)):
			t.Errorf("mm --help has no line for %q:\n%s", name, stdout)
		}
	}
}

// TestEveryCommandReachable: each command of the table is reached by its
// name — its --help prints its usage, and an argument it does not take
// gets its own usage error — and a new command without a case here fails.
func TestEveryCommandReachable(t *testing.T) {
	t.Parallel()
	cases := map[*command]struct {
		args []string // reaches the command's run or its own argument check
		want string   // on stderr, with exit code 2
	}{
		cmdACP:     {[]string{"acp", "x"}, `unexpected argument "x" after acp` + "\n"},
		cmdSetup:   {[]string{"acp", "setup", "x"}, `unexpected argument "x" after setup` + "\n"},
		cmdDoctor:  {[]string{"doctor", "--json", "x"}, `unexpected argument "x" after doctor (only --json)`},
		cmdTrust:   {[]string{"trust", "-y", "--nope"}, `unexpected argument "--nope" after trust (only --yes)`},
		cmdEval:    {[]string{"eval", "nope"}, "mm: usage: mm eval "},
		cmdSandbox: {[]string{"__sandbox"}, "mm __sandbox: usage"},
	}
	for c := range cases {
		if !slices.Contains(commands, c) {
			t.Errorf("command %q is not in the table", c.name)
		}
	}
	for _, c := range commands {
		if c == cmdAgent {
			continue // mm alone: TestAgentWithoutCommand
		}
		tc, ok := cases[c]
		if !ok {
			t.Errorf("command %q: no case", c.name)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, stderr, code := runTable(t, nil, "", tc.args...); code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
				t.Errorf("mm %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stderr, tc.want)
			}
			if c.internal {
				return
			}
			for _, help := range [][]string{{c.name, "--help"}, {c.name, "-h"}} {
				if stdout, stderr, code := runTable(t, nil, "", help...); code != exitcode.OK || stdout != c.usage+"\n" || stderr != "" {
					t.Errorf("mm %s: exit %d, stdout %q, stderr %q; want its usage", strings.Join(help, " "), code, stdout, stderr)
				}
			}
		})
	}
}

// TestAgentWithoutCommand: mm with no command serves an editor when stdin
// is not a terminal (here: it ends at EOF, saying nothing), and runs one
// turn in line mode with -p (here: no server, exit 1 with the hint).
func TestAgentWithoutCommand(t *testing.T) {
	t.Parallel()
	if stdout, stderr, code := runTable(t, nil, ""); code != exitcode.OK || stdout != "" {
		t.Errorf("mm with stdin at EOF: exit %d, stdout %q, stderr %q; want the agent to end quietly", code, stdout, stderr)
	}
	if _, stderr, code := runTable(t, nil, "", "-p", "hi"); code != exitcode.Failed || !strings.Contains(stderr, "llama-server") {
		t.Errorf("mm -p hi without a server: exit %d, stderr %q", code, stderr)
	}
}

// TestUnknownCommand: a word that names no command a user runs is a usage
// error; the internal ones are not reachable after mm's flags.
func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"frobnicate"}, {"--json", "__sandbox"}, {"acp", "doctor"}} {
		stdout, stderr, code := runTable(t, nil, "", args...)
		if code != exitcode.Usage || stdout != "" || stderr == "" {
			t.Errorf("mm %s: exit %d, stdout %q, stderr %q; want a usage error", strings.Join(args, " "), code, stdout, stderr)
		}
	}
}

// TestConfigKeysHiddenOnce: the config is read once at start, and the
// variables it names as holding keys go then to what hides secrets.
func TestConfigKeysHiddenOnce(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "agent.yaml")
	testenv.WriteFile(t, cfg, "apiKeyEnv: LLM_AUTH\n")
	var hidden [][]string
	_, stderr, code := runTable(t, func(names []string) { hidden = append(hidden, names) }, "", "-c", cfg, "trust")
	if code != exitcode.OK {
		t.Fatalf("mm trust: exit %d: %s", code, stderr)
	}
	if len(hidden) != 1 || !slices.Equal(hidden[0], []string{"LLM_AUTH"}) {
		t.Errorf("hidden %q; want [[LLM_AUTH]], once", hidden)
	}
}
