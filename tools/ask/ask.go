// Package ask holds the ask_<name> tools: the chat model puts one
// question to another agent of the config's agents: and gets its final
// answer back as text. The tool knows no engine: the composition root
// gives it the function that runs the other agent's turn.
package ask

import (
	"context"
	"fmt"
	"strings"

	"github.com/mm-agent/mm/tools"
)

// Options configure one ask tool.
type Options struct {
	// Name is the agent's name in the config (historian → ask_historian).
	Name string
	// About says who the agent is, in a few words (its file's
	// description, else its model).
	About string
	// Ask runs the other agent's turn on the question alone and returns
	// its answer, or a failed Result whose text is one repair line. It
	// returns an error only when ctx ended.
	Ask func(ctx context.Context, env tools.Env, question string) (tools.Result, error)
}

type params struct {
	Question string `json:"question" desc:"with the names and paths it needs"`
}

// New returns the ask_<name> tool. Its description is short: it is sent
// with every request.
func New(o Options) tools.Tool {
	name := "ask_" + o.Name
	return tools.New(tools.Spec[params]{
		Name: name,
		Description: fmt.Sprintf("Ask the %s agent (%s) one question and get its answer. It does not see this conversation: include what it needs. It reads files, changes nothing.",
			o.Name, strings.TrimSpace(o.About)),
		Kind: tools.KindOther,
		// The asked agent's own calls declare and ask on their own.
		Caps: tools.Reads,
		Describe: func(_ tools.Env, p params) tools.Call {
			return tools.Call{Title: "Ask " + o.Name + ": " + clip(p.Question, 80)}
		},
		Run: func(ctx context.Context, env tools.Env, p params) (tools.Result, error) {
			q := strings.TrimSpace(p.Question)
			if q == "" {
				return tools.Errorf(`[error: "question" is empty — write the question for %s, e.g. {"question": "Why was the parser rewritten in 2024?"}]`, o.Name), nil
			}
			return o.Ask(ctx, env, q)
		},
	})
}

// clip shortens s to n characters on one line, for a title.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
