package llm_test

import (
	"context"
	"testing"

	"github.com/mm-agent/mm/engine/fakellm"
	"github.com/mm-agent/mm/engine/llm"
)

func TestStreamBasic(t *testing.T) {
	sc, err := fakellm.Load("testdata/read_edit_answer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := fakellm.NewServer(sc)
	defer srv.Close()
	c := llm.New(llm.Options{Provider: llm.ProviderLlamaCpp, BaseURL: srv.URL()})
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}},
		Tools: []llm.ToolDef{{Name: "read_file", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	var deltas []llm.Delta
	resp, err := c.Stream(context.Background(), req, func(d llm.Delta) error { deltas = append(deltas, d); return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", resp)
	for _, d := range deltas {
		t.Logf("%+v %+v", d, d.ToolCall)
	}
	resp, err = c.Stream(context.Background(), req, nil)
	t.Logf("%+v %v", resp, err)
	resp, err = c.Complete(context.Background(), req)
	t.Logf("%+v %v", resp, err)
	resp, err = c.Stream(context.Background(), req, nil)
	t.Logf("%+v %v", resp, err)
	for _, r := range srv.Requests() {
		t.Logf("%s", r.Body)
	}
}
