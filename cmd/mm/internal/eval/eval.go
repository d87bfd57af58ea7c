package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/cmd/mm/internal/line"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/permit"
	"github.com/mm-agent/mm/skills"
)

// Usage is mm eval's command line, for mm's usage and its own errors.
const Usage = "usage: mm eval routing|tools [CASES.yaml] [--json] | mm eval tasks [TASKS.yaml] [--json]"

// Host is what mm eval measures, as the composition root built it from
// the config: the same routers and sessions a turn would use, so that a
// score is the score of what runs.
type Host struct {
	// ConfigSource names the config file, for the line that says where to
	// set a router up.
	ConfigSource string
	// SkillRouter and ToolRouter are the configured routers (nil: none).
	SkillRouter, ToolRouter *decide.Router
	// Skills is the skill set of cwd and the same skills as a skill
	// router's options.
	Skills func(cwd string) (*skills.Set, decide.Options)
	// Session starts an unsaved session in dir with its own workspace,
	// asking the user through ask.
	Session func(dir string, ask permit.Asker) (*engine.Session, error)
	// Model is the chat model served (empty: not known yet).
	Model func() string
}

// Run is `mm eval`: the routing eval through the configured skill
// router, the tool-routing eval through the configured tool router, or
// the task eval through the configured chat model. It returns the exit
// code.
func Run(ctx context.Context, h Host, cwd string, args []string, jsonOut bool, stdout, stderr io.Writer) int {
	var kind, file string
	for _, arg := range args {
		switch {
		case arg == "--json" || arg == "-json":
			jsonOut = true
		case kind == "":
			kind = arg
		case file == "":
			file = arg
		default:
			fmt.Fprintln(stderr, "mm:", Usage)
			return exitcode.Usage
		}
	}
	var data []byte
	switch kind {
	case "routing":
		data = builtinRouting
	case "tools":
		data = builtinTools
	case "tasks":
		data = builtinTasks
	default:
		fmt.Fprintln(stderr, "mm:", Usage)
		return exitcode.Usage
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(stderr, "mm: cannot read the cases:", err)
			return exitcode.Usage
		}
		data = b
	}
	switch kind {
	case "routing":
		return evalRouting(ctx, h, cwd, data, jsonOut, stdout, stderr)
	case "tools":
		return evalTools(ctx, h, data, jsonOut, stdout, stderr)
	}
	return evalTasks(ctx, h, data, jsonOut, stdout, stderr)
}

// routeCase is one routing case: a prompt and the skill it calls for.
type routeCase struct {
	Prompt string `yaml:"prompt" json:"prompt"`
	Skill  string `yaml:"skill" json:"expected"`
}

type routeResult struct {
	routeCase
	Got     string  `json:"got"`
	Sure    float64 `json:"sure"`
	Outcome string  `json:"outcome"` // hit, wrong, miss, extra, error
	Ms      float64 `json:"ms"`
	Error   string  `json:"error,omitempty"`
}

type confusion struct {
	Expected string `json:"expected"`
	Got      string `json:"got"`
	Count    int    `json:"count"`
}

// RoutingReport is the routing eval's --json form: each case, the
// outcome counts, the share of hits, the confusion pairs and latency.
type RoutingReport struct {
	Router        string         `json:"router"`
	MinConfidence float64        `json:"minConfidence"`
	Cases         []routeResult  `json:"cases"`
	Counts        map[string]int `json:"counts"`
	Accuracy      float64        `json:"accuracy"`
	Confusion     []confusion    `json:"confusion"`
	P50Ms         float64        `json:"p50_ms"`
	P95Ms         float64        `json:"p95_ms"`
}

func evalRouting(ctx context.Context, h Host, cwd string, data []byte, jsonOut bool, stdout, stderr io.Writer) int {
	r := h.SkillRouter
	if r == nil {
		fmt.Fprintln(stderr, "mm: mm eval routing runs the configured router: set skillRouting: {agent: router.yaml} in "+h.ConfigSource)
		return exitcode.Usage
	}
	var cases []routeCase
	if err := yaml.Unmarshal(data, &cases); err != nil || len(cases) == 0 {
		fmt.Fprintln(stderr, "mm: the routing cases are not a YAML list of {prompt, skill}"+why(err))
		return exitcode.Usage
	}
	set, opts := h.Skills(cwd)
	for i, c := range cases {
		if _, ok := set.Lookup(c.Skill); !ok && c.Skill != decide.None {
			fmt.Fprintf(stderr, "mm: case %d expects skill %q, which is not among the skills (%s)\n", i+1, c.Skill, strings.Join(set.Names(), ", "))
			return exitcode.Usage
		}
	}
	rep := RoutingReport{Router: r.Client.Endpoint(), MinConfidence: r.MinConfidence(), Counts: map[string]int{}}
	pairs := map[[2]string]int{}
	var ms []float64
	for _, c := range cases {
		start := time.Now()
		got, err := r.Choose(ctx, c.Prompt, opts)
		res := routeResult{routeCase: c, Got: got.Choice, Sure: got.Sure, Ms: float64(time.Since(start).Microseconds()) / 1000}
		if got.Choice != decide.None && got.Sure < r.MinConfidence() {
			res.Got = decide.None // an abstention
		}
		switch {
		case err != nil:
			res.Outcome, res.Error, res.Got = "error", err.Error(), ""
		case res.Got == c.Skill:
			res.Outcome = "hit"
		case c.Skill == decide.None:
			res.Outcome = "extra"
		case res.Got == decide.None:
			res.Outcome = "miss"
		default:
			res.Outcome = "wrong"
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "mm: cancelled")
			return exitcode.Failed
		}
		rep.Counts[res.Outcome]++
		if res.Outcome != "hit" {
			pairs[[2]string{c.Skill, orDash(res.Got)}]++
		}
		ms = append(ms, res.Ms)
		rep.Cases = append(rep.Cases, res)
	}
	rep.Accuracy = float64(rep.Counts["hit"]) / float64(len(cases))
	rep.Confusion = confusions(pairs)
	rep.P50Ms, rep.P95Ms = percentile(ms, 50), percentile(ms, 95)
	if jsonOut {
		writeJSONReport(stdout, rep)
	} else {
		printRouting(stdout, rep)
	}
	if rep.Counts["error"] == len(cases) {
		return exitcode.Failed // the router never answered
	}
	return exitcode.OK
}

// confusions are the (expected, got) pairs of the cases that missed,
// the most frequent first, then by name, so the table reads the same on
// every run.
func confusions(pairs map[[2]string]int) []confusion {
	var out []confusion
	for p, n := range pairs {
		out = append(out, confusion{p[0], p[1], n})
	}
	sort.Slice(out, func(i, j int) bool {
		x, y := out[i], out[j]
		return x.Count > y.Count || x.Count == y.Count && x.Expected+x.Got < y.Expected+y.Got
	})
	return out
}

func printRouting(w io.Writer, rep RoutingReport) {
	fmt.Fprintf(w, "routing eval: %d cases through %s, minConfidence %.2f\n", len(rep.Cases), rep.Router, rep.MinConfidence)
	for _, c := range rep.Cases {
		mark := "✓"
		if c.Outcome != "hit" {
			mark = "✗"
		}
		got := fmt.Sprintf("%s %.2f", orDash(c.Got), c.Sure)
		if c.Outcome == "error" {
			got = "error: " + c.Error
		}
		fmt.Fprintf(w, "%s %-6s %-16s %-22s %6.0f ms  %s\n", mark, c.Outcome, c.Skill, got, c.Ms, cut(c.Prompt, 60))
	}
	fmt.Fprintf(w, "hit %d · wrong %d · miss %d · extra %d · error %d — %.0f %% right\n",
		rep.Counts["hit"], rep.Counts["wrong"], rep.Counts["miss"], rep.Counts["extra"], rep.Counts["error"], 100*rep.Accuracy)
	if len(rep.Confusion) > 0 {
		var parts []string
		for _, c := range rep.Confusion {
			parts = append(parts, fmt.Sprintf("%s → %s ×%d", c.Expected, c.Got, c.Count))
		}
		fmt.Fprintln(w, "confusion: "+strings.Join(parts, ", "))
	}
	fmt.Fprintf(w, "latency p50 %.0f ms · p95 %.0f ms\n", rep.P50Ms, rep.P95Ms)
}

// evalTask is one task: files written in a fresh directory, a prompt, and
// a shell command that exits 0 when the task was done.
type evalTask struct {
	Name   string            `yaml:"name"`
	Prompt string            `yaml:"prompt"`
	Files  map[string]string `yaml:"files"`
	Check  string            `yaml:"check"`
}

type taskResult struct {
	Name       string  `json:"name"`
	Pass       bool    `json:"pass"`
	Reason     string  `json:"reason,omitempty"`
	StopReason string  `json:"stopReason"`
	Turns      int     `json:"turns"`
	Prompt     int     `json:"prompt_tokens"`
	Completion int     `json:"completion_tokens"`
	Seconds    float64 `json:"seconds"`
}

// TasksReport is the task eval's --json form: each task's result and
// how many passed.
type TasksReport struct {
	Model  string       `json:"model"`
	Tasks  []taskResult `json:"tasks"`
	Passed int          `json:"passed"`
	Total  int          `json:"total"`
}

// checkTimeout bounds a task's check (a go test may compile).
const checkTimeout = 3 * time.Minute

func evalTasks(ctx context.Context, h Host, data []byte, jsonOut bool, stdout, stderr io.Writer) int {
	var tasks []evalTask
	if err := yaml.Unmarshal(data, &tasks); err != nil || len(tasks) == 0 {
		fmt.Fprintln(stderr, "mm: the tasks are not a YAML list of {name, prompt, files, check}"+why(err))
		return exitcode.Usage
	}
	for i, t := range tasks {
		if t.Name == "" || t.Prompt == "" || t.Check == "" {
			fmt.Fprintf(stderr, "mm: task %d needs a name, a prompt and a check\n", i+1)
			return exitcode.Usage
		}
	}
	rep := TasksReport{Total: len(tasks)}
	for _, t := range tasks {
		res, err := runTask(ctx, h, t, stderr, jsonOut)
		if err != nil {
			fmt.Fprintln(stderr, "mm:", err)
			return exitcode.Failed
		}
		if res.Pass {
			rep.Passed++
		}
		rep.Tasks = append(rep.Tasks, res)
		if !jsonOut {
			mark := "✓ pass"
			if !res.Pass {
				mark = "✗ fail"
			}
			line := fmt.Sprintf("%s %-22s %2d turns · %6d tokens · %5.1f s", mark, t.Name, res.Turns, res.Prompt+res.Completion, res.Seconds)
			if res.Reason != "" {
				line += " — " + res.Reason
			}
			fmt.Fprintln(stdout, line)
		}
	}
	rep.Model = h.Model()
	if jsonOut {
		writeJSONReport(stdout, rep)
	} else {
		fmt.Fprintf(stdout, "%d of %d tasks passed (model %s)\n", rep.Passed, rep.Total, orDash(rep.Model))
	}
	if rep.Passed < rep.Total {
		return exitcode.Failed
	}
	return exitcode.OK
}

// runTask plays one task in a temp directory with every action allowed,
// then runs its check there.
func runTask(ctx context.Context, h Host, t evalTask, stderr io.Writer, quiet bool) (taskResult, error) {
	dir, err := os.MkdirTemp("", "mm-eval-"+t.Name+"-")
	if err != nil {
		return taskResult{}, fmt.Errorf("task %s: %w", t.Name, err)
	}
	defer os.RemoveAll(dir)
	for name, text := range t.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return taskResult{}, fmt.Errorf("task %s: file %q is outside its directory", t.Name, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return taskResult{}, fmt.Errorf("task %s: %w", t.Name, err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return taskResult{}, fmt.Errorf("task %s: %w", t.Name, err)
		}
	}
	ask, closeAsk := line.Asker(true, stderr)
	defer closeAsk()
	sess, err := h.Session(dir, ask)
	if err != nil {
		return taskResult{}, fmt.Errorf("task %s: %w", t.Name, err)
	}
	res := taskResult{Name: t.Name}
	start := time.Now()
	end := sess.Run(ctx, t.Prompt, func(e engine.Event) {
		if _, ok := e.(engine.Usage); ok {
			res.Turns++
		}
	})
	res.Seconds = time.Since(start).Seconds()
	res.StopReason, res.Prompt, res.Completion = string(end.Reason), end.Prompt, end.Completion
	if ctx.Err() != nil {
		return res, errors.New("cancelled")
	}
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, "bash", "-c", t.Check)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	res.Pass = err == nil
	if !res.Pass {
		res.Reason = "check failed: " + lastLine(string(out), err)
		if end.Reason == engine.Failed {
			res.Reason = "turn failed: " + end.Err
		}
	}
	return res, nil
}

func lastLine(out string, err error) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return cut(l, 120)
	}
	return err.Error()
}

// why is a case file's parse error as the end of one line: YAML's
// errors span lines, and an empty list has none.
func why(err error) string {
	if err == nil {
		return " (the list is empty)"
	}
	return ": " + strings.Join(strings.Fields(err.Error()), " ")
}

func writeJSONReport(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// percentile is the nearest-rank percentile of xs.
func percentile(xs []float64, p int) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
