package decide

import (
	"context"
	"fmt"
	"strings"

	"github.com/mm-agent/mm/engine/oneshot"
)

// Router is a decision agent asked before each chat turn. As a skill
// router (Skill) it proposes the skill a prompt calls for; as a tool
// router (Tools) it takes away the tool groups a prompt clearly does not
// need. Both only advise: any failure leaves the turn as it would have
// been without them, and says why in one line.
type Router struct {
	Client *Client
	// Threshold bounds what the router acts on; nil takes the use's
	// default. Skill: the least confidence a choice needs
	// (DefaultMinConfidence). Tools: a group is dropped only below this
	// probability of being needed (DefaultDropBelow).
	Threshold *float64
}

// DefaultMinConfidence is the confidence a skill choice needs: a wrongly
// routed skill sends the chat model the wrong way, so a choice must be
// clearly better than a guess.
const DefaultMinConfidence = 0.6

// DefaultDropBelow is the probability under which a tool group is
// dropped: a tool wrongly dropped is a turn that cannot do its task, while
// one wrongly kept costs a few hundred tokens, so only what is clearly
// useless goes.
const DefaultDropBelow = 0.2

// MinConfidence is the skill router's threshold.
func (r *Router) MinConfidence() float64 { return r.threshold(DefaultMinConfidence) }

// DropBelow is the tool router's threshold.
func (r *Router) DropBelow() float64 { return r.threshold(DefaultDropBelow) }

func (r *Router) threshold(def float64) float64 {
	if r.Threshold != nil {
		return *r.Threshold
	}
	return def
}

// skillQuestion is the skill routing question; the criteria are the
// skills' descriptions, the same the chat model reads.
const skillQuestion = "Which skill should the assistant use to carry out this request? Answer none when no skill clearly applies."

// Skill asks which of skills the prompt calls for. It returns the skill
// chosen ("" for none) and the 🧭 line saying what happened ("" when the
// caller cancelled). A choice only adds what the user's own `$skill`
// would: reading the skill stays the chat model's call, in the open.
func (r *Router) Skill(ctx context.Context, prompt string, skills Options) (chosen, info string) {
	if len(skills) == 0 {
		return "", ""
	}
	got, err := r.Choose(ctx, prompt, skills)
	min := r.MinConfidence()
	switch {
	case oneshot.IsCancelled(err):
		return "", ""
	case err != nil:
		return "", "🧭 skill routing skipped: " + err.Error() + " — the prompt goes as written"
	case got.Choice == None:
		return "", fmt.Sprintf("🧭 no skill applies (%.2f)", got.Sure)
	case got.Sure < min:
		return "", fmt.Sprintf("🧭 no skill routed: %s at %.2f is below minConfidence %.2f", got.Choice, got.Sure, min)
	}
	return got.Choice, fmt.Sprintf("🧭 skill %s (%.2f)", got.Choice, got.Sure)
}

// Choose asks the skill routing question alone, the threshold not
// applied: what mm eval routing measures.
func (r *Router) Choose(ctx context.Context, prompt string, skills Options) (Routed, error) {
	return r.Client.Route(ctx, prompt, skillQuestion, skills)
}

// ToolGroups are the groups a tool router asks about, in this
// order, each with the tools it holds. The groups and their questions
// never change, so the same prompt makes the same request; a tool outside
// every group (read_skill, MCP tools, ask_ tools) is never taken away.
var ToolGroups = []struct {
	Name, Need string
	Tools      []string
}{
	{"shell", "running shell commands (build, test, git, install, start or stop processes)", []string{"bash"}},
	{"files", "reading, creating or editing files in the workspace", []string{"read_file", "edit_file", "write_file"}},
	{"web", "fetching a web page or a URL", []string{"fetch_content"}},
	{"code", "the language server: definitions, references, symbols, diagnostics, renaming across files", []string{"lsp"}},
	{"plan", "writing down a step-by-step plan for a task of several steps", []string{"plan"}},
}

// Tools asks which tool groups of the offered tools the prompt does not
// need, and returns the tools to hide for this turn with the 🧭 line saying
// so; the line is also the one that says why nothing was hidden when the
// router failed ("" when nothing was hidden, or the caller cancelled).
func (r *Router) Tools(ctx context.Context, prompt string, offered []string) (hide []string, info string) {
	has := map[string]bool{}
	for _, n := range offered {
		has[n] = true
	}
	var groups Options
	members := map[string][]string{}
	for _, g := range ToolGroups {
		for _, n := range g.Tools {
			if has[n] {
				members[g.Name] = append(members[g.Name], n)
			}
		}
		if len(members[g.Name]) > 0 {
			groups = append(groups, Option{Name: g.Name, Description: g.Need})
		}
	}
	if len(groups) == 0 {
		return nil, ""
	}
	need, err := r.Client.Relevant(ctx, prompt, groups)
	switch {
	case oneshot.IsCancelled(err):
		return nil, ""
	case err != nil:
		return nil, "🧭 tool routing skipped: " + err.Error() + " — all tools offered"
	}
	below := r.DropBelow()
	var dropped []string
	for _, g := range groups {
		if p := need[g.Name]; p < below {
			hide = append(hide, members[g.Name]...)
			dropped = append(dropped, fmt.Sprintf("%s (%.2f)", g.Name, p))
		}
	}
	if len(dropped) > 0 {
		info = fmt.Sprintf("🧭 tools not offered this turn: %s — below dropBelow %.2f", strings.Join(dropped, ", "), below)
	}
	return hide, info
}
