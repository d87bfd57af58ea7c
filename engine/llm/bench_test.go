package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// BenchmarkStream measures streaming throughput: deltas per second
// through Stream, over real HTTP from llmtest, 1,000 deltas per answer
// (reasoning, content and tool-call argument pieces).
func BenchmarkStream(b *testing.B) {
	words := strings.Repeat("token ", 400)
	srv := llmtest.NewServer(llmtest.Scenario{Loop: true, Steps: []llmtest.Step{{
		Reasoning: words,
		Content:   words,
		ToolCalls: []llmtest.ToolCall{{Name: "write_file", ArgsRaw: `{"path":"a.txt","content":"` + strings.Repeat("x", 200) + `"}`, ChunkSize: 1}},
	}}})
	defer srv.Close()
	c := llm.New(llm.Options{Provider: llm.ProviderLlamaCpp, BaseURL: srv.URL()})
	req := hello()
	b.ReportAllocs()
	b.ResetTimer()
	deltas := 0
	for b.Loop() {
		_, err := c.Stream(context.Background(), req, func(llm.Delta) error { deltas++; return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(deltas)/b.Elapsed().Seconds(), "deltas/s")
}
