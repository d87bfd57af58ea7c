package engine_test

import (
	"context"
	"testing"

	"github.com/mm-agent/mm/engine"
	"github.com/mm-agent/mm/engine/llm/llmtest"
)

// TestAdaptiveTemperature: behind its switch, the call right after a
// loop warning samples at 0.4, the next one at the configured temperature;
// without the switch nothing changes.
func TestAdaptiveTemperature(t *testing.T) {
	same := llmtest.Step{ToolCalls: []llmtest.ToolCall{call("echo", `{"text":"again"}`)}}
	for _, on := range []bool{true, false} {
		s, srv := newSession(t, script(same, same, same, llmtest.Step{Content: "changing approach"}),
			func(o *engine.Options) {
				o.AdaptiveTemperature = on
				zero := 0.0
				o.Sampling.Temperature = &zero
			})
		s.Run(context.Background(), "go", func(engine.Event) {})
		var temps []float64
		for _, r := range srv.Requests() {
			var v float64
			r.Field("temperature", &v)
			temps = append(temps, v)
		}
		want := []float64{0, 0, 0, 0}
		if on {
			want[3] = 0.4 // the call after the third identical call (warned)
		}
		for i := range want {
			if temps[i] != want[i] {
				t.Errorf("adaptive=%v: temperatures %v, want %v", on, temps, want)
				break
			}
		}
	}
}
