// Package llmtest is the scripted, streaming, OpenAI-compatible model
// server that every test of mm talks to: the language model is the only
// part of mm replaced in tests, and it is replaced by this real HTTP
// server, not by a mock of the client.
//
// A Scenario is a list of steps; each step answers one chat-completions
// request, in order of arrival. Scenario files are YAML, one file per
// conversation (README.md lists every key with an example).
//
// Invariants:
//   - Streams are shaped like llama-server's: a role chunk first, then
//     reasoning, content and tool-call deltas (tool calls split across
//     chunks with their index; id and name in the first), a finish_reason
//     chunk, a usage chunk with no choices only when the request asked for
//     stream_options.include_usage, timings, then "data: [DONE]". Every
//     departure from that shape is an explicit knob of the step.
//   - Every chat request is recorded, byte for byte, failed attempts
//     included, before it is answered.
//   - A request beyond the last step gets HTTP 500 "scenario exhausted"
//     (never a made-up answer), so that a test that makes one call too many
//     fails loudly.
//   - Nothing waits on a guessed sleep: delays are the scenario's own, and
//     a stalled step waits for the client to leave, Server.Release or
//     Server.Close. StepStarted and StepStalled let a test wait for a
//     precise point of a stream.
//   - Output is deterministic: fixed ids, fixed "created", usage derived
//     from the request size (4 bytes a token) and cached tokens from the
//     common prefix with the previous request, as a KV cache would.
package llmtest
