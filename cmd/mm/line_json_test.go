package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// seconds is a command's duration in a bash result, which varies.
var seconds = regexp.MustCompile(`· [0-9.]+s\]`)

// TestLineModeJSONGolden pins the --json shape scripts depend on (README,
// "mm -p --json"): lower-case keys, empty fields left out, locations and
// diffs as objects of lower-case fields. Token counts follow the prompt's
// size and commands' durations vary, so they are written as "<n>" and
// "<t>"; the workspace is $WORK.
// Rewrite with: go test ./cmd/mm -run TestLineModeJSONGolden -update
func TestLineModeJSONGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ scenario, prompt string }{
		{"read_edit_answer", "Change hello to goodbye"}, // thoughts, calls, diffs, usage, end
		{"loop_stuck", "show missing.txt"},              // failed calls, struggles, a failed turn
		{"plan", "fix the loop"},                        // a plan
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			srv := scenario(t, tc.scenario)
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "hello.txt"), "hello world\nsecond line\n")
			// A configured window: the probed one may come after the first
			// usage event, which would then have no size.
			cfg := filepath.Join(t.TempDir(), "agent.yaml")
			writeFile(t, cfg, "contextWindow: 32768\n")
			stdout, stderr, code := runInProcess(t, dir, mmEnv(t, srv), "", "-c", cfg, "-p", tc.prompt, "--json", "--yes")
			if code > 1 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var got strings.Builder
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
				var ev map[string]any
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("non-JSON line %q", line)
				}
				checkKeys(t, ev, line)
				for _, k := range []string{"used", "size", "prompt", "completion", "cached"} {
					if _, ok := ev[k]; ok {
						ev[k] = "<n>"
					}
				}
				var b strings.Builder
				enc := json.NewEncoder(&b) // sorted keys
				enc.SetEscapeHTML(false)
				enc.Encode(ev)
				got.WriteString(seconds.ReplaceAllString(strings.ReplaceAll(b.String(), dir, "$WORK"), "· <t>s]"))
			}
			golden := filepath.Join("testdata", "json", tc.scenario+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("--json output changed (rerun with -update if intended, and update README):\n got:\n%s\nwant:\n%s", got.String(), want)
			}
		})
	}
}

// checkKeys fails on a key that is not lower case or a value that is
// empty (null, "", false, 0, [] or {}) anywhere in an event.
func checkKeys(t *testing.T, v any, line string) {
	t.Helper()
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k != strings.ToLower(k) {
				t.Errorf("key %q is not lower case in %s", k, line)
			}
			if x == nil || x == "" || x == false || x == 0.0 || (isEmpty(x)) {
				if k != "input" { // the model's own arguments are passed as they came
					t.Errorf("empty field %q in %s", k, line)
				}
			}
			if k != "input" {
				checkKeys(t, x, line)
			}
		}
	case []any:
		for _, x := range v {
			checkKeys(t, x, line)
		}
	}
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}
