// Package acp is mm's Agent Client Protocol front end: it serves the agent
// over stdio with github.com/coder/acp-go-sdk, turns prompts into engine
// turns, renders engine events as session updates, and asks permission in
// the editor.
//
// Invariants:
//   - Nothing but JSON-RPC is written to stdout: malformed or oversized
//     input lines get a JSON-RPC error, logs go to the logger.
//   - Updates of one session are sent in order, from the goroutine running
//     the turn.
//   - A cancelled turn answers stopReason "cancelled" — never an error,
//     never end_turn — and its final updates are still delivered.
//   - The package stays thin: it imports the engine and the tools contract,
//     never a tool implementation, lspbridge or fileedit, so the SDK can be
//     upgraded in a day.
package acp
