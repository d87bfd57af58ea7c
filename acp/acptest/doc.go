// Package acptest is a fake editor: a real Agent Client Protocol client,
// built on the protocol's Go SDK, that a test connects to an agent served
// in its own process (over pipes) or to a built binary (over stdio), as
// net/http/httptest serves a handler. mm's tests drive mm with it.
//
// An [Editor] opens sessions, prompts and cancels, records every session
// update and permission request in order, and answers what an agent asks
// the way a test scripts it: which permission option to pick (or to hold
// the question open, or to act while it is open), the editor's unsaved
// buffers for fs/read_text_file and fs/write_text_file, terminals that run
// real commands, and elicitation forms. A [Wire] speaks raw JSON-RPC lines
// instead, for the messages an SDK client would never send.
//
// Invariants:
//   - Every message the agent writes is checked against the official ACP
//     JSON schema, read from the protocol SDK's npm package
//     ([SchemaPackage] at [SchemaVersion], installed by scripts/test and
//     found through [SchemaEnv]; never copied into the repository): an
//     Editor checks its whole conversation when its test ends; a Wire's
//     test calls [CheckSchema] on what it sent and read. Without the
//     schema that check fails under CI and is skipped, with the reason in
//     the test's log, elsewhere; the rest of the test runs.
//   - Nothing waits on a guessed sleep: waits end on the awaited update,
//     line or exit, or fail the test after [Hung].
//   - An agent outlives no test: an Editor closes the agent's input when
//     its test ends and fails the test if the agent does not end within
//     ten seconds (then kills it); a Wire stops its agent at once.
//
// It is test code: only _test.go files import it, which
// cmd/mm/deps_test.go enforces.
package acptest
