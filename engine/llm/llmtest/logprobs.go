package llmtest

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strings"
)

// TokenLogprob is one generated token of a step and the distribution the
// model had at that position, as llama-server reports it when a request
// asks "logprobs": true (a guard model's Yes/No).
type TokenLogprob struct {
	// Token is the generated text piece; the step's tokens, joined, are
	// its Content.
	Token string `yaml:"token"`
	// Top maps candidates to their log-probability at this position, the
	// generated token included.
	Top map[string]float64 `yaml:"top"`
}

// logprobs is the choice's "logprobs" object of a non-streamed answer,
// in llama-server's shape (tools/server/server-task.cpp,
// to_json_oaicompat_chat and completion_token_output::probs_vector_to_json):
// {"content": [{"id", "token", "bytes", "logprob", "top_logprobs": [{"id",
// "token", "bytes", "logprob"}, …]}, …]}, the candidates most likely first
// and n_probs of them at most (llama-server fills none when n_probs is
// 0). Nil — the key left out, as llama-server
// does — when the request did not ask or the step scripts none (a server
// that returns no logprobs).
func (a *answer) logprobs() any {
	if a.nProbs <= 0 || len(a.step.Logprobs) == 0 {
		return nil
	}
	var content []any
	for _, t := range a.step.Logprobs {
		type cand struct {
			tok string
			lp  float64
		}
		var cs []cand
		for tok, lp := range t.Top {
			cs = append(cs, cand{tok, lp})
		}
		slices.SortFunc(cs, func(x, y cand) int { return cmp.Or(cmp.Compare(y.lp, x.lp), strings.Compare(x.tok, y.tok)) })
		top := []any{}
		for _, c := range cs[:min(len(cs), a.nProbs)] {
			top = append(top, tokenJSON(c.tok, c.lp))
		}
		e := tokenJSON(t.Token, t.Top[t.Token])
		e["top_logprobs"] = top
		content = append(content, e)
	}
	return map[string]any{"content": content}
}

// tokenJSON is one token entry; ids are stable made-up vocabulary ids.
func tokenJSON(tok string, lp float64) map[string]any {
	h := fnv.New32a()
	h.Write([]byte(tok))
	bytes := []int{}
	for _, b := range []byte(tok) {
		bytes = append(bytes, int(b))
	}
	return map[string]any{"id": int(h.Sum32() % 150000), "token": tok, "bytes": bytes, "logprob": lp}
}

// validateLogprobs checks that the scripted tokens spell the content and
// that each generated token is among its candidates: a real server's
// logprobs always do.
func (st Step) validateLogprobs() error {
	if len(st.Logprobs) == 0 {
		return nil
	}
	var b strings.Builder
	for i, t := range st.Logprobs {
		b.WriteString(t.Token)
		if _, ok := t.Top[t.Token]; !ok {
			return fmt.Errorf("logprobs[%d]: token %q is not in its top", i, t.Token)
		}
		sum := 0.0
		for tok, lp := range t.Top {
			if lp > 0 {
				return fmt.Errorf("logprobs[%d]: %q has logprob %g > 0", i, tok, lp)
			}
			sum += math.Exp(lp)
		}
		if sum > 1.001 {
			return fmt.Errorf("logprobs[%d]: the candidates' probabilities sum to %.3f, more than 1", i, sum)
		}
	}
	if b.String() != st.Content {
		return fmt.Errorf("logprobs tokens spell %q, the content is %q", b.String(), st.Content)
	}
	return nil
}
