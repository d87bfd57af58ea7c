package risk

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mm-agent/mm/engine/oneshot"
)

// Guard is a guard agent: a model, the risks it is asked about, and the
// threshold at which a risk is flagged.
type Guard struct {
	Client *Client
	Risks  []Risk
	// Threshold: a probability at or above it is flagged (0: 0.5).
	Threshold float64
}

// DefaultThreshold flags what the model finds more likely than not.
const DefaultThreshold = 0.5

func (g *Guard) threshold() float64 {
	if g.Threshold <= 0 {
		return DefaultThreshold
	}
	return g.Threshold
}

// Report is a guard's answer about one text: one verdict per risk, in the
// agent file's order.
type Report struct {
	Model     string
	Threshold float64
	Verdicts  []Verdict
}

// Check asks about text, one request per risk; the first failure ends it.
func (g *Guard) Check(ctx context.Context, text string) (Report, error) {
	rep := Report{Model: g.Client.Model, Threshold: g.threshold()}
	for _, r := range g.Risks {
		v, err := g.Client.Ask(ctx, text, r)
		if err != nil {
			return rep, err
		}
		rep.Verdicts = append(rep.Verdicts, v)
	}
	return rep, nil
}

// RiskNames lists the risks the guard is asked about, for the user.
func (g *Guard) RiskNames() string {
	names := make([]string, len(g.Risks))
	for i, r := range g.Risks {
		names[i] = r.Name
	}
	return strings.Join(names, ", ")
}

// DirectTimeout bounds a guard asked directly (mm -p, an editor prompt)
// rather than from a hook: the first call may wait for the model to load.
const DirectTimeout = 30 * time.Second

// Answer is what a chat front end shows for text: one line per risk, then
// the JSON; or the one line saying why there is none. Nothing of it
// enters a session's history.
func (g *Guard) Answer(ctx context.Context, text string) string {
	rep, err := g.Check(ctx, strings.TrimSpace(text))
	if err != nil {
		return "mm: " + oneshot.Line(err)
	}
	return rep.Lines() + "\n```json\n" + string(rep.JSON()) + "\n```\n"
}

// Flagged reports whether verdict v is at or above the threshold.
func (r Report) Flagged(v Verdict) bool { return v.P >= r.Threshold }

// Any reports whether some risk is flagged.
func (r Report) Any() bool {
	for _, v := range r.Verdicts {
		if r.Flagged(v) {
			return true
		}
	}
	return false
}

// JSON is what `mm -p` prints: {"model", "threshold", "risks": {name:
// {"probability", "flagged", "from"}}, "flagged"} — "from" is "logprobs",
// or "text" when the server sent none and the probability is the answer
// read as 1 or 0.
func (r Report) JSON() []byte {
	type risk struct {
		Probability float64 `json:"probability"`
		Flagged     bool    `json:"flagged"`
		From        string  `json:"from"`
	}
	out := struct {
		Model     string          `json:"model,omitempty"`
		Threshold float64         `json:"threshold"`
		Risks     map[string]risk `json:"risks"`
		Flagged   bool            `json:"flagged"`
	}{r.Model, r.Threshold, map[string]risk{}, r.Any()}
	for _, v := range r.Verdicts {
		from := "logprobs"
		if v.FromText {
			from = "text"
		}
		out.Risks[v.Risk] = risk{round(v.P), r.Flagged(v), from}
	}
	b, _ := json.Marshal(out)
	return b
}

// Lines is one line per risk, what a person reads before the JSON.
func (r Report) Lines() string {
	var b strings.Builder
	for _, v := range r.Verdicts {
		fmt.Fprintf(&b, "%s: %.2f", v.Risk, v.P)
		if v.FromText {
			b.WriteString(" (from the answer text: no logprobs)")
		}
		if r.Flagged(v) {
			fmt.Fprintf(&b, " ⚠ flagged (≥ %.2f)", r.Threshold)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func round(p float64) float64 {
	return float64(int(p*10000+0.5)) / 10000
}
