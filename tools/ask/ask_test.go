package ask

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mm-agent/mm/tools"
)

// TestAskTool: ask_<name> passes the trimmed question on and returns the
// answer; an empty question is a repair line and asks no one; the
// description names the agent and says who it is, in few characters.
func TestAskTool(t *testing.T) {
	var asked []string
	tl := New(Options{Name: "historian", About: "knows the history", Ask: func(_ context.Context, _ tools.Env, q string) (tools.Result, error) {
		asked = append(asked, q)
		return tools.Result{Text: "In 2019."}, nil
	}})
	if tl.Name() != "ask_historian" || !strings.Contains(tl.Description(), "historian agent (knows the history)") {
		t.Errorf("name %q, description %q", tl.Name(), tl.Description())
	}
	if n := len(tl.Name()) + len(tl.Description()) + len(tl.Schema()); n > 400 {
		t.Errorf("ask_historian costs %d characters of every request", n)
	}
	res, err := tl.Run(context.Background(), nil, json.RawMessage(`{"question":"  When?  "}`))
	if err != nil || res.Text != "In 2019." || len(asked) != 1 || asked[0] != "When?" {
		t.Errorf("Run = %+v, %v; asked %q", res, err, asked)
	}
	for _, args := range []string{`{"question":"  "}`, `{}`, `{"q":"x"}`} {
		res, _ := tl.Run(context.Background(), nil, json.RawMessage(args))
		if !res.IsError || !strings.HasPrefix(res.Text, "[error:") {
			t.Errorf("%s: %+v", args, res)
		}
	}
	if len(asked) != 1 {
		t.Errorf("a bad call asked the agent: %q", asked)
	}
	if c := tl.Describe(nil, json.RawMessage(`{"question":"Why was the parser\nrewritten in 2024?"}`)); c.Title != "Ask historian: Why was the parser rewritten in 2024?" {
		t.Errorf("title %q", c.Title)
	}
}
