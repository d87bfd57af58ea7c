package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/decide"
	"github.com/mm-agent/mm/skills"
)

// routingInstructions is the skill routing question (E34); the criteria
// are the skills' descriptions, the same the chat model reads.
const routingInstructions = "Which skill should the assistant use to carry out this request? Answer none when no skill clearly applies."

// skillRouter asks a decision agent, before a chat turn, which skill the
// prompt calls for (E34). It proposes; the chat model acts: a choice only
// adds the line `$skill` would, and read_skill stays the chat model's own
// call, in the open.
type skillRouter struct {
	client *decide.Client
	min    float64
}

// newSkillRouter is nil when skillRouting names no agent.
func newSkillRouter(cfg *config.Config) *skillRouter {
	r := cfg.SkillRouting
	if r.File == nil {
		return nil
	}
	min := 0.6
	if r.MinConfidence != nil {
		min = *r.MinConfidence
	}
	return &skillRouter{client: decisionClient(cfg, r.File, time.Duration(r.Timeout)), min: min}
}

// decisionClient talks to the server of agent file a; without a baseURL
// of its own it uses the chat agent's.
func decisionClient(chat, a *config.Config, timeout time.Duration) *decide.Client {
	base := a.BaseURL
	if base == "" {
		base = chat.BaseURL
	}
	if base == "" {
		base = "http://127.0.0.1:8080/v1"
	}
	return &decide.Client{BaseURL: base, Model: a.Model, APIKey: a.APIKey, Timeout: timeout}
}

// route returns the prompt with the chosen skill's line added, and the 🧭
// line saying what happened; it never fails: any trouble leaves the
// prompt as it is and says why.
func (r *skillRouter) route(ctx context.Context, prompt string, set *skills.Set) (string, string) {
	if len(set.All()) == 0 {
		return prompt, ""
	}
	got, err := r.choose(ctx, prompt, set)
	var de *decide.Error
	switch {
	case errors.As(err, &de) && de.Kind == decide.Cancelled:
		return prompt, ""
	case err != nil:
		return prompt, "🧭 skill routing skipped: " + err.Error() + " — the prompt goes as written"
	case got.Choice == decide.None:
		return prompt, fmt.Sprintf("🧭 no skill applies (%.2f)", got.Sure)
	case got.Sure < r.min:
		return prompt, fmt.Sprintf("🧭 no skill routed: %s at %.2f is below minConfidence %.2f", got.Choice, got.Sure, r.min)
	}
	return strings.TrimRight(prompt, "\n") + "\n\n" + skills.Line(got.Choice, ""), fmt.Sprintf("🧭 skill %s (%.2f)", got.Choice, got.Sure)
}

// choose asks the routing question over the skills of set.
func (r *skillRouter) choose(ctx context.Context, prompt string, set *skills.Set) (decide.Routed, error) {
	var opts decide.Options
	for _, sk := range set.All() {
		opts = append(opts, decide.Option{Name: sk.Name, Description: sk.Description})
	}
	return r.client.Route(ctx, prompt, routingInstructions, opts)
}

// toolGroups are the groups toolRouting asks about (E35), in this order,
// each with the tools it holds. The groups and their questions never
// change, so the same prompt gets the same request; a tool outside every
// group (read_skill, MCP tools, ask_ tools) is never touched.
var toolGroups = []struct {
	name, need string
	tools      []string
}{
	{"shell", "running shell commands (build, test, git, install, start or stop processes)", []string{"bash"}},
	{"files", "reading, creating or editing files in the workspace", []string{"read_file", "edit_file", "write_file"}},
	{"web", "fetching a web page or a URL", []string{"fetch_content"}},
	{"code", "the language server: definitions, references, symbols, diagnostics, renaming across files", []string{"lsp"}},
	{"plan", "writing down a step-by-step plan for a task of several steps", []string{"plan"}},
}

// toolRouter asks a decision agent, before each chat turn, which tool
// groups the prompt does not need (E35). It only takes away, and only what
// is clearly useless: a group is dropped below dropBelow (0.2), because a
// tool wrongly dropped is a turn that cannot do its task while one wrongly
// kept costs a few hundred tokens. Any failure offers every tool.
type toolRouter struct {
	client *decide.Client
	below  float64
}

// newToolRouter is nil when toolRouting names no agent.
func newToolRouter(cfg *config.Config) *toolRouter {
	r := cfg.ToolRouting
	if r.File == nil {
		return nil
	}
	below := 0.2
	if r.DropBelow != nil {
		below = *r.DropBelow
	}
	return &toolRouter{client: decisionClient(cfg, r.File, time.Duration(r.Timeout)), below: below}
}

// route is the engine's ToolRouter: the tools to hide for this turn of a
// session offering offered, and the 🧭 line when something was dropped or
// the router failed.
func (r *toolRouter) route(ctx context.Context, prompt string, offered []string) engine.ToolRoute {
	has := map[string]bool{}
	for _, n := range offered {
		has[n] = true
	}
	var groups decide.Options
	members := map[string][]string{}
	for _, g := range toolGroups {
		for _, n := range g.tools {
			if has[n] {
				members[g.name] = append(members[g.name], n)
			}
		}
		if len(members[g.name]) > 0 {
			groups = append(groups, decide.Option{Name: g.name, Description: g.need})
		}
	}
	if len(groups) == 0 {
		return engine.ToolRoute{}
	}
	need, err := r.client.Relevant(ctx, prompt, groups)
	var de *decide.Error
	switch {
	case errors.As(err, &de) && de.Kind == decide.Cancelled:
		return engine.ToolRoute{}
	case err != nil:
		return engine.ToolRoute{Info: "🧭 tool routing skipped: " + err.Error() + " — all tools offered"}
	}
	var out engine.ToolRoute
	var dropped []string
	for _, g := range groups {
		if p := need[g.Name]; p < r.below {
			out.Hide = append(out.Hide, members[g.Name]...)
			dropped = append(dropped, fmt.Sprintf("%s (%.2f)", g.Name, p))
		}
	}
	if len(dropped) > 0 {
		out.Info = fmt.Sprintf("🧭 tools not offered this turn: %s — below dropBelow %.2f", strings.Join(dropped, ", "), r.below)
	}
	return out
}
