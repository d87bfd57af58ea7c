package llm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// The profile fills what the request leaves unset, between the request's
// own values and mm's defaults: named in the config, guessed from
// the served model's id, or none at all.
func TestProfiledFillsSampling(t *testing.T) {
	temp := 0.1
	tests := []struct {
		name, profile, model string
		sampling             llm.Sampling
		wantTemp, wantTopK   string // the JSON sent; "" when absent
		wantTopP             string
		keepReasoning        bool
	}{
		{"guessed from the id", "", "unsloth/Qwen3-4B-GGUF", llm.Sampling{}, "0.6", "20", "0.95", false},
		{"named wins over the guess", "gemma", "qwen3-4b", llm.Sampling{}, "1", "64", "0.95", false},
		{"explicit wins over the profile", "gemma", "qwen3-4b", llm.Sampling{Temperature: &temp}, "0.1", "64", "0.95", false},
		{"none: mm's defaults", "none", "qwen3-4b", llm.Sampling{}, "0", "", "0.9", false},
		{"unknown model: mm's defaults", "", "phi-4-mini", llm.Sampling{}, "0", "", "0.9", false},
		{"gpt-oss keeps its reasoning", "", "gpt-oss-20b", llm.Sampling{}, "1", "", "1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(llmtest.Scenario{Models: []string{tt.model}, Steps: []llmtest.Step{{Content: "hi"}}})
			defer srv.Close()
			conn := llm.NewConnector(llm.ConnectorOptions{BaseURL: srv.URL()})
			defer conn.Close()
			p := llm.NewProfiled(conn, tt.profile, nil)
			if p.KeepReasoning() {
				t.Fatal("KeepReasoning before any request named the model")
			}
			req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, Sampling: tt.sampling}
			if _, err := p.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			var gotTemp, gotTopK any
			r.Field("temperature", &gotTemp)
			r.Field("top_k", &gotTopK)
			if str(gotTemp) != tt.wantTemp || str(gotTopK) != tt.wantTopK {
				t.Errorf("temperature %v, top_k %v; want %s, %s", gotTemp, gotTopK, tt.wantTemp, tt.wantTopK)
			}
			var topP any
			if r.Field("top_p", &topP); str(topP) != tt.wantTopP {
				t.Errorf("top_p %v, want %s", topP, tt.wantTopP)
			}
			if p.KeepReasoning() != tt.keepReasoning {
				t.Errorf("KeepReasoning = %v, want %v", p.KeepReasoning(), tt.keepReasoning)
			}
		})
	}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}
