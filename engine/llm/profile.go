package llm

import (
	"sort"
	"strings"
)

// Profile is what mm knows of a model family: sampling defaults
// from the family's model card, and how its reasoning must be handled.
// Explicit configuration always wins over a profile; a profile wins over
// mm's own defaults.
type Profile struct {
	Name     string
	Sampling Sampling
	// KeepReasoning sends the reasoning back with tool-call turns: gpt-oss
	// degrades by its third tool call without it.
	KeepReasoning bool
	// match are lowercase substrings of a model id naming the family.
	match []string
}

func f(v float64) *float64 { return &v }
func i(v int) *int         { return &v }

// profiles are the model families mm knows, most specific first: a
// model id is matched against each in this order.
var profiles = []Profile{
	{Name: "gpt-oss", match: []string{"gpt-oss", "gpt_oss", "gptoss"},
		Sampling: Sampling{Temperature: f(1.0), TopP: f(1.0)}, KeepReasoning: true},
	{Name: "qwen2.5-coder", match: []string{"qwen2.5-coder", "qwen2.5_coder", "qwen3-coder", "qwen-coder", "qwen3coder"},
		Sampling: Sampling{Temperature: f(0.7), TopP: f(0.8), TopK: i(20), RepeatPenalty: f(1.05)}},
	{Name: "qwen3", match: []string{"qwen3", "qwq"},
		Sampling: Sampling{Temperature: f(0.6), TopP: f(0.95), TopK: i(20), MinP: f(0)}},
	{Name: "gemma", match: []string{"gemma"},
		Sampling: Sampling{Temperature: f(1.0), TopP: f(0.95), TopK: i(64), MinP: f(0)}},
	{Name: "granite", match: []string{"granite"},
		Sampling: Sampling{Temperature: f(0), TopP: f(1.0)}},
	{Name: "mistral", match: []string{"mistral", "devstral", "magistral", "codestral", "ministral"},
		Sampling: Sampling{Temperature: f(0.15), TopP: f(1.0)}},
	{Name: "llama", match: []string{"llama-3", "llama3", "llama-4", "llama4", "llama"},
		Sampling: Sampling{Temperature: f(0.6), TopP: f(0.9)}},
}

// ProfileNames lists the known profiles, sorted, for messages.
func ProfileNames() []string {
	var out []string
	for _, p := range profiles {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

// LookupProfile finds a profile by its name.
func LookupProfile(name string) (Profile, bool) {
	for _, p := range profiles {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// GuessProfile names the family of a model id ("unsloth/Qwen3-4B-GGUF",
// "gpt-oss:20b"); false when it is none mm knows.
func GuessProfile(model string) (Profile, bool) {
	id := strings.ToLower(model)
	for _, p := range profiles {
		for _, m := range p.match {
			if strings.Contains(id, m) {
				return p, true
			}
		}
	}
	return Profile{}, false
}

// Fill returns s with every unset field taken from the profile, then from
// def: explicit values (s) win over the profile, the profile over def.
func (p Profile) Fill(s, def Sampling) Sampling {
	pick := func(v, prof, d *float64) *float64 {
		switch {
		case v != nil:
			return v
		case prof != nil:
			return prof
		}
		return d
	}
	s.Temperature = pick(s.Temperature, p.Sampling.Temperature, def.Temperature)
	s.TopP = pick(s.TopP, p.Sampling.TopP, def.TopP)
	s.MinP = pick(s.MinP, p.Sampling.MinP, def.MinP)
	s.PresencePenalty = pick(s.PresencePenalty, p.Sampling.PresencePenalty, def.PresencePenalty)
	s.RepeatPenalty = pick(s.RepeatPenalty, p.Sampling.RepeatPenalty, def.RepeatPenalty)
	if s.TopK == nil {
		s.TopK = p.Sampling.TopK
		if s.TopK == nil {
			s.TopK = def.TopK
		}
	}
	if s.MaxTokens == 0 {
		s.MaxTokens = def.MaxTokens
	}
	if s.ParallelToolCalls == nil {
		s.ParallelToolCalls = def.ParallelToolCalls
	}
	return s
}
