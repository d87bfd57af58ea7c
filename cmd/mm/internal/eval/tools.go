package eval

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mm-agent/mm/cmd/mm/internal/exitcode"
	"github.com/mm-agent/mm/engine/decide"
)

// toolCase is one tool-routing case: a prompt and the groups it needs.
type toolCase struct {
	Prompt string   `yaml:"prompt" json:"prompt"`
	Need   []string `yaml:"need" json:"need"`
}

type toolCaseResult struct {
	toolCase
	// Needed is P(needed) by group, as the router answered.
	Needed  map[string]float64 `json:"needed,omitempty"`
	Dropped []string           `json:"dropped"`
	Outcome string             `json:"outcome"` // ok, wrong-drop, error
	Ms      float64            `json:"ms"`
	Error   string             `json:"error,omitempty"`
}

// ToolsReport is the tool-routing eval's --json form.
type ToolsReport struct {
	Router    string           `json:"router"`
	DropBelow float64          `json:"dropBelow"`
	Cases     []toolCaseResult `json:"cases"`
	// WrongDrops counts the cases that lost a group they needed.
	WrongDrops int `json:"wrongDrops"`
	Errors     int `json:"errors"`
	// Dropped counts the groups dropped over all cases; Unneeded the groups
	// the cases did not need (what a perfect router would drop).
	Dropped  int `json:"dropped"`
	Unneeded int `json:"unneeded"`
	// ListChanges counts consecutive cases whose offered tools differ: the
	// prompt-cache prefixes lost if the cases were turns of one session.
	ListChanges int     `json:"listChanges"`
	P50Ms       float64 `json:"p50_ms"`
	P95Ms       float64 `json:"p95_ms"`
}

// evalTools is `mm eval tools`: the cases through the
// configured toolRouting agent, every group asked about (the router is
// measured, not this workspace's tools).
func evalTools(ctx context.Context, h Host, data []byte, jsonOut bool, stdout, stderr io.Writer) int {
	r := h.ToolRouter
	if r == nil {
		fmt.Fprintln(stderr, "mm: mm eval tools runs the configured tool router: set toolRouting: {agent: router.yaml} in "+h.ConfigSource)
		return exitcode.Usage
	}
	var cases []toolCase
	if err := yaml.Unmarshal(data, &cases); err != nil || len(cases) == 0 {
		fmt.Fprintln(stderr, "mm: the tool-routing cases are not a YAML list of {prompt, need: [groups]}"+why(err))
		return exitcode.Usage
	}
	var groups decide.Options
	var names []string
	for _, g := range decide.ToolGroups {
		groups = append(groups, decide.Option{Name: g.Name, Description: g.Need})
		names = append(names, g.Name)
	}
	for i, c := range cases {
		for _, n := range c.Need {
			if !slices.Contains(names, n) {
				fmt.Fprintf(stderr, "mm: case %d needs group %q, which is not a tool group (%s)\n", i+1, n, strings.Join(names, ", "))
				return exitcode.Usage
			}
		}
	}
	rep := ToolsReport{Router: r.Client.Endpoint(), DropBelow: r.DropBelow()}
	var ms []float64
	var prev []string
	for i, c := range cases {
		start := time.Now()
		need, err := r.Client.Relevant(ctx, c.Prompt, groups)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "mm: cancelled")
			return exitcode.Failed
		}
		res := toolCaseResult{toolCase: c, Needed: need, Dropped: []string{}, Outcome: "ok", Ms: float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			res.Outcome, res.Error = "error", err.Error()
			rep.Errors++
		}
		for _, g := range names {
			if err == nil && need[g] < r.DropBelow() {
				res.Dropped = append(res.Dropped, g)
				if slices.Contains(c.Need, g) {
					res.Outcome = "wrong-drop"
				}
			}
			if !slices.Contains(c.Need, g) {
				rep.Unneeded++
			}
		}
		if res.Outcome == "wrong-drop" {
			rep.WrongDrops++
		}
		rep.Dropped += len(res.Dropped)
		if i > 0 && !slices.Equal(prev, res.Dropped) {
			rep.ListChanges++
		}
		prev = res.Dropped
		ms = append(ms, res.Ms)
		rep.Cases = append(rep.Cases, res)
	}
	rep.P50Ms, rep.P95Ms = percentile(ms, 50), percentile(ms, 95)
	if jsonOut {
		writeJSONReport(stdout, rep)
	} else {
		printTools(stdout, rep, names)
	}
	if rep.Errors == len(cases) {
		return exitcode.Failed // the router never answered
	}
	return exitcode.OK
}

func printTools(w io.Writer, rep ToolsReport, names []string) {
	fmt.Fprintf(w, "tool-routing eval: %d cases through %s, dropBelow %.2f\n", len(rep.Cases), rep.Router, rep.DropBelow)
	for _, c := range rep.Cases {
		mark := "✓"
		if c.Outcome != "ok" {
			mark = "✗"
		}
		var ps []string
		for _, g := range names {
			if p, ok := c.Needed[g]; ok {
				ps = append(ps, fmt.Sprintf("%s %.2f", g, p))
			}
		}
		detail := strings.Join(ps, " ")
		if c.Outcome == "error" {
			detail = "error: " + c.Error
		}
		fmt.Fprintf(w, "%s %-10s dropped %-12s %s  %4.0f ms  %s\n", mark, c.Outcome, orDash(strings.Join(c.Dropped, ",")), detail, c.Ms, cut(c.Prompt, 50))
	}
	fmt.Fprintf(w, "wrong drops %d · errors %d · dropped %d of %d unneeded groups · tool list changed %d times in %d turns\n",
		rep.WrongDrops, rep.Errors, rep.Dropped, rep.Unneeded, rep.ListChanges, len(rep.Cases))
	fmt.Fprintf(w, "latency p50 %.0f ms · p95 %.0f ms\n", rep.P50Ms, rep.P95Ms)
}
