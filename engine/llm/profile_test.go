package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/mm-agent/mm/engine/llm"
)

func TestGuessProfile(t *testing.T) {
	for model, want := range map[string]string{
		"unsloth/Qwen3-4B-GGUF:Q4_K_M":     "qwen3",
		"qwen3:8b":                         "qwen3",
		"Qwen/Qwen2.5-Coder-7B-Instruct":   "qwen2.5-coder",
		"qwen3-coder:30b":                  "qwen2.5-coder",
		"ggml-org/gpt-oss-20b-GGUF":        "gpt-oss",
		"gemma3:4b":                        "gemma",
		"ai/gemma3n":                       "gemma",
		"ibm-granite/granite-3.3-8b":       "granite",
		"mistralai/Devstral-Small-2505":    "mistral",
		"meta-llama/Llama-3.2-3B-Instruct": "llama",
		"phi-4-mini":                       "",
		"fake-model":                       "",
	} {
		p, ok := llm.GuessProfile(model)
		if p.Name != want || ok != (want != "") {
			t.Errorf("GuessProfile(%q) = %q %v, want %q", model, p.Name, ok, want)
		}
	}
	if p, _ := llm.LookupProfile("gpt-oss"); !p.KeepReasoning {
		t.Error("gpt-oss must keep its reasoning: it needs it back with tool calls")
	}
}

// Explicit values win over the profile, the profile over mm's defaults.
func TestProfileFill(t *testing.T) {
	qwen, _ := llm.LookupProfile("qwen3")
	temp, zero, par := 0.2, 0.0, false
	def := llm.Sampling{Temperature: &zero, TopP: &zero, MaxTokens: 4096, ParallelToolCalls: &par}
	s := qwen.Fill(llm.Sampling{Temperature: &temp}, def)
	if *s.Temperature != 0.2 || *s.TopP != 0.95 || *s.TopK != 20 || s.MaxTokens != 4096 || *s.ParallelToolCalls {
		t.Errorf("filled %+v", s)
	}
	s = llm.Profile{}.Fill(llm.Sampling{}, def)
	if *s.Temperature != 0 || s.TopK != nil {
		t.Errorf("no profile: %+v", s)
	}
}

// top_k, min_p and the repeat penalty go to local servers only.
func TestLocalSamplingFields(t *testing.T) {
	k, minP, rep, pres := 20, 0.05, 1.05, 0.5
	req := fullRequest()
	req.Sampling.TopK, req.Sampling.MinP, req.Sampling.RepeatPenalty, req.Sampling.PresencePenalty = &k, &minP, &rep, &pres
	for provider, want := range map[string][]string{
		llm.ProviderLlamaCpp: {"top_k", "min_p", "repeat_penalty", "presence_penalty"},
		llm.ProviderVLLM:     {"top_k", "min_p", "repetition_penalty", "presence_penalty"},
		llm.ProviderOpenAI:   {"presence_penalty"},
	} {
		r := sent(t, provider, "sk-test", req, true)
		var body map[string]json.RawMessage
		json.Unmarshal(r.Body, &body)
		for _, f := range want {
			if _, ok := body[f]; !ok {
				t.Errorf("%s: %s not sent", provider, f)
			}
		}
		if provider == llm.ProviderOpenAI {
			for _, f := range []string{"top_k", "min_p", "repeat_penalty"} {
				if _, ok := body[f]; ok {
					t.Errorf("openai: %s sent (a strict API rejects it)", f)
				}
			}
		}
	}
}
