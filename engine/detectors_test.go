package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/tools"
	"github.com/mm-agent/mm/tools/bash"
	"github.com/mm-agent/mm/tools/files"
)

// detectorCase is one small-model failure replayed through the real engine
// with the real tools (testdata/detectors/*.yaml): what the model does
// (scenario), and what must follow — what the model receives next, what
// the user sees, and that mm still serves afterwards.
type detectorCase struct {
	Prompt   string            `yaml:"prompt"`
	Files    map[string]string `yaml:"files"`
	Config   caseConfig        `yaml:"config"`
	Scenario yaml.Node         `yaml:"scenario"`
	Expect   caseExpect        `yaml:"expect"`
}

type caseConfig struct {
	MaxTokens         int             `yaml:"max_tokens"`
	MaxTurns          int             `yaml:"max_turns"`
	ToolBudget        int             `yaml:"tool_budget"`
	FirstTokenTimeout time.Duration   `yaml:"first_token_timeout"`
	IdleTimeout       time.Duration   `yaml:"idle_timeout"`
	RetryDelays       []time.Duration `yaml:"retry_delays"`
}

type caseExpect struct {
	// End is the first turn's stop reason; Err a part of its one line.
	End string `yaml:"end"`
	Err string `yaml:"err"`
	// Struggles are "level kind", in order, for the first turn.
	Struggles []string `yaml:"struggles"`
	// Requests is how many model requests the first turn made.
	Requests int `yaml:"requests"`
	// Request is which request (1-based) Sees/NeverSees look at: the last
	// message of that request. 0 means the last request of the first turn.
	Request   int      `yaml:"request"`
	Sees      []string `yaml:"sees"`
	NeverSees []string `yaml:"never_sees"`
	// History: parts that must (or must not) be anywhere in the messages
	// of the second turn's request (what was stored).
	History      []string `yaml:"history"`
	NotInHistory []string `yaml:"not_in_history"`
	// Shown: parts of the text the user was shown; Thought: of the
	// thoughts.
	Shown    []string `yaml:"shown"`
	NotShown []string `yaml:"not_shown"`
	Thought  []string `yaml:"thought"`
	Progress []string `yaml:"progress"`
	// Files after the first turn ("" content: must not exist).
	Files map[string]*string `yaml:"files"`
	// Tools run by name, in order.
	Ran []string `yaml:"ran"`
}

func TestDetectorScenarios(t *testing.T) {
	paths, _ := filepath.Glob("testdata/detectors/*.yaml")
	if len(paths) < 20 {
		t.Fatalf("only %d detector scenarios", len(paths))
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			runDetectorCase(t, path)
		})
	}
}

func runDetectorCase(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c detectorCase
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Config.FirstTokenTimeout == 0 && c.Config.IdleTimeout == 0 {
		// Cases that measure time run alone, so a loaded machine does not
		// starve their timers; the others run in parallel.
		t.Parallel()
	}
	scYAML, _ := yaml.Marshal(&c.Scenario)
	sc, err := llmtest.Parse(scYAML)
	if err != nil {
		t.Fatal(err)
	}
	// A step answers the follow-up prompt: right after the steps the first
	// turn must use (the others prove the turn stopped before them).
	at := len(sc.Steps)
	if n := c.Expect.Requests; n > 0 && n < at {
		at = n
	}
	sc.Steps = append(sc.Steps[:at], append([]llmtest.Step{{Content: "still serving"}}, sc.Steps[at:]...)...)
	srv := llmtest.NewServer(sc)
	defer srv.Close()

	dir := t.TempDir()
	for name, content := range c.Files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	maxTokens := c.Config.MaxTokens
	if maxTokens == 0 {
		maxTokens = 4096
	}
	reg := tools.NewRegistry(append(files.New(files.Options{MaxTokens: maxTokens}), bash.New(bash.Options{}))...)
	delays := c.Config.RetryDelays
	if delays == nil {
		delays = []time.Duration{}
	}
	s := engine.NewSession(engine.Options{
		Model: llm.New(llm.Options{Provider: "llamacpp", BaseURL: srv.URL(), RetryDelays: delays,
			FirstTokenTimeout: c.Config.FirstTokenTimeout, IdleTimeout: c.Config.IdleTimeout}),
		ModelName:  "fake-model",
		Tools:      reg,
		Env:        diskEnv(t, dir, nil),
		Sampling:   llm.Sampling{MaxTokens: maxTokens},
		MaxTurns:   c.Config.MaxTurns,
		ToolBudget: c.Config.ToolBudget,
	})
	prompt := c.Prompt
	if prompt == "" {
		prompt = "do the task"
	}
	var (
		struggles      []string
		shown, thought strings.Builder
		progress       []string
		ran            []string
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	end := s.Run(ctx, prompt, func(e engine.Event) {
		switch e := e.(type) {
		case engine.Struggle:
			lvl := "warning"
			if e.Level == engine.Severe {
				lvl = "severe"
			}
			struggles = append(struggles, lvl+" "+e.Kind)
			t.Logf("struggle: %s %s", lvl, e.Text)
		case engine.Text:
			shown.WriteString(e.Text)
		case engine.Thought:
			thought.WriteString(e.Text)
		case engine.Progress:
			progress = append(progress, e.Text)
		case engine.ToolStarted:
			ran = append(ran, e.Name)
		}
	})
	x := c.Expect
	if want := orDefault(x.End, "end_turn"); string(end.Reason) != want {
		t.Errorf("end = %s (%s), want %s", end.Reason, end.Err, want)
	}
	if x.Err != "" && !strings.Contains(end.Err, x.Err) {
		t.Errorf("err = %q, want it to contain %q", end.Err, x.Err)
	}
	if got, want := strings.Join(struggles, ", "), strings.Join(x.Struggles, ", "); got != want {
		t.Errorf("struggles = [%s], want [%s]", got, want)
	}
	reqs := srv.Requests()
	if x.Requests > 0 && len(reqs) != x.Requests {
		t.Errorf("model requests = %d, want %d", len(reqs), x.Requests)
	}
	if x.Request > len(reqs) {
		t.Fatalf("request %d of %d", x.Request, len(reqs))
	}
	if len(x.Sees)+len(x.NeverSees) > 0 {
		r := reqs[len(reqs)-1]
		if x.Request > 0 {
			r = reqs[x.Request-1]
		}
		last := r.Messages[len(r.Messages)-1].Content
		for _, s := range x.Sees {
			if !strings.Contains(last, s) {
				t.Errorf("the model's request does not end with %q:\n%s", s, last)
			}
		}
		for _, s := range x.NeverSees {
			if strings.Contains(last, s) {
				t.Errorf("the model's request ends with %q:\n%s", s, last)
			}
		}
	}
	holds(t, "what the user was shown", shown.String(), x.Shown, x.NotShown)
	for _, s := range x.Thought {
		if !strings.Contains(thought.String(), s) {
			t.Errorf("thoughts lack %q: %q", s, thought.String())
		}
	}
	for _, p := range x.Progress {
		if !strings.Contains(strings.Join(progress, "\n"), p) {
			t.Errorf("progress lacks %q: %q", p, progress)
		}
	}
	for name, want := range x.Files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case want == nil && err == nil:
			t.Errorf("%s exists", name)
		case want != nil && (err != nil || string(b) != *want):
			t.Errorf("%s = %q (%v), want %q", name, b, err, *want)
		}
	}
	if x.Ran != nil && strings.Join(ran, " ") != strings.Join(x.Ran, " ") {
		t.Errorf("tool calls shown = %v, want %v", ran, x.Ran)
	}

	// mm still serves: the follow-up prompt gets the last step's answer.
	var again strings.Builder
	end2 := s.Run(ctx, "are you still there?", func(e engine.Event) {
		if tx, ok := e.(engine.Text); ok {
			again.WriteString(tx.Text)
		}
	})
	if end2.Reason != engine.EndTurn || again.String() != "still serving" {
		t.Fatalf("follow-up prompt: %+v, %q", end2, again.String())
	}
	all := srv.Requests()
	var hist strings.Builder
	for _, m := range all[len(all)-1].Messages {
		fmt.Fprintf(&hist, "%s: %s", m.Role, m.Content)
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&hist, " [call %s %s]", tc.Name, tc.Arguments)
		}
		hist.WriteString("\n")
	}
	holds(t, "history", hist.String(), x.History, x.NotInHistory)
}

// holds checks that text, what names it in the failures, holds each of
// in and none of out.
func holds(t *testing.T, what, text string, in, out []string) {
	t.Helper()
	for _, s := range in {
		if !strings.Contains(text, s) {
			t.Errorf("%s lacks %q:\n%s", what, s, text)
		}
	}
	for _, s := range out {
		if strings.Contains(text, s) {
			t.Errorf("%s holds %q:\n%s", what, s, text)
		}
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
