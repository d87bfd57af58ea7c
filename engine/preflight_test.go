package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
	"github.com/mm-agent/mm/tools"
)

type writeParams struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type turnKey struct{}

// checkedWrite refuses any path but ok.txt from its preflight. It refuses
// everything when it is not run on the turn's context (on
// context.Background, a preflight reading through the editor would outlive
// a cancelled turn).
func checkedWrite(ran *bool) tools.Tool {
	return tools.New(tools.Spec[writeParams]{
		Name: "write_file", Description: "Write.", Kind: tools.KindEdit, Caps: tools.WritesWorkspace,
		Preflight: func(ctx context.Context, _ tools.Env, path string) string {
			if ctx.Value(turnKey{}) == nil {
				return "[error: the preflight did not get the turn's context]"
			}
			if path != "ok.txt" {
				return "[error: " + path + " exists and you have not read it in this session — call read_file on it first]"
			}
			return ""
		},
		Run: func(context.Context, tools.Env, writeParams) (tools.Result, error) {
			*ran = true
			return tools.Result{Text: "written"}, nil
		},
	})
}

// TestPreflightCutsTheGeneration: a write to a file never read is refused as soon as
// its path is complete in the stream. The scripted arguments never end
// (they repeat until the client goes away), so the turn can only finish if
// mm cut the generation.
func TestPreflightCutsTheGeneration(t *testing.T) {
	var ran bool
	s, srv := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{
			Name: "write_file", ArgsRaw: `{"path": "secret.txt", "content": "`, ChunkSize: 3,
			ArgsRepeat: &llmtest.Repeat{Pattern: "line of a huge file\\n", Times: 0},
		}}},
		llmtest.Step{Content: "I will read it first."},
	), func(o *engine.Options) { o.Tools = tools.NewRegistry(checkedWrite(&ran)) })
	var r recorder
	if end := s.Run(context.WithValue(context.Background(), turnKey{}, true), "overwrite secret.txt", r.emit); end.Reason != engine.EndTurn {
		t.Fatalf("end = %+v", end)
	}
	if ran {
		t.Error("the refused call ran")
	}
	msgs := srv.Requests()[1].Messages
	call, result := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if len(call.ToolCalls) != 1 || call.ToolCalls[0].Arguments != `{"path":"secret.txt"}` {
		t.Errorf("the call did not enter history reduced to its path: %+v", call)
	}
	if result.Role != "tool" || !strings.Contains(result.Content, "call read_file on it first") || result.ToolCallID != call.ToolCalls[0].ID {
		t.Errorf("the refusal is not the call's result: %+v", result)
	}
	var finished bool
	for _, e := range r.events {
		if f, ok := e.(engine.ToolFinished); ok && f.Status == engine.ToolFailed {
			finished = true
		}
	}
	if !finished {
		t.Error("the user was not shown the refused call")
	}
}

func TestPreflightLetsAllowedPathsThrough(t *testing.T) {
	var ran bool
	s, _ := newSession(t, script(
		llmtest.Step{ToolCalls: []llmtest.ToolCall{{Name: "write_file", ArgsRaw: `{"path":"ok.txt","content":"hi"}`, ChunkSize: 1}}},
		llmtest.Step{Content: "done"},
	), func(o *engine.Options) { o.Tools = tools.NewRegistry(checkedWrite(&ran)) })
	s.Run(context.WithValue(context.Background(), turnKey{}, true), "write ok.txt", func(engine.Event) {})
	if !ran {
		t.Error("an allowed write did not run")
	}
}
