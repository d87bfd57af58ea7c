// Package decide is mm's client for decision models: small classifiers
// served at POST /v1/systemone (llama-server, Ollama, LiteLLM, Jev) that
// answer typed questions — choice, noul, score — in one forward pass,
// without generating text. The wire format is the request and answer
// types of this package ([Question], [Answer], [Response]); the routers
// and decision agents built on it are described in docs/agents.md.
//
// Invariants:
//   - Answers are keyed by question id, never by position; an answer
//     missing for a question asked, of another type, or whose
//     probabilities do not sum to one is a malformed answer, not a guess.
//   - Confidence is read the careful way (Answer.Sure): for a choice, the
//     lower of the server's confidence and the chosen option's
//     probability, since servers compute confidence differently.
//   - Every failure is an *oneshot.Error with a Kind and one line for the
//     user; a missing route (server too old) and a model that is not a
//     decision model are told apart, because the fixes differ.
//   - Every call has a hard timeout: a decision is advice, and never worth
//     holding up a turn.
//
// The package is a leaf: the standard library and engine/oneshot only.
package decide
