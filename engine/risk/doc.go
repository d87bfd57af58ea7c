// Package risk asks a guard model — a classifier such as IBM Granite
// Guardian served by llama-server, vLLM or Ollama on its chat-completions
// route — how likely a text carries a named risk.
//
// Invariants:
//   - One message, no history, no system prompt (except Ollama's, where the
//     system message is how its guardian template takes the risk name),
//     one request per risk, temperature 0, a few tokens.
//   - The probability is P(yes)/(P(yes)+P(no)) summed over the first
//     yes/no token's candidates (case and spaces ignored, as the Granite
//     Guardian cookbooks do); without logprobs it is the answer text, 1 or
//     0, and the verdict says so.
//   - Every failure is an *oneshot.Error with one line; nothing here
//     blocks or rewrites anything: callers add a warning, never remove
//     text.
package risk
