// Package engine is the turn loop and everything between the user and the
// model: it builds each request (a stable prefix: fixed system prompt, tools
// sorted by name, project context in the first user message), streams the
// answer, runs the tools the model calls, and reports what happens as typed
// events.
//
// Invariants:
//   - The engine knows no screen: it never writes to stdout and never
//     imports a front end, the ACP SDK, lspbridge, fileedit or a tool
//     implementation. Front ends render Events.
//   - Events of a session are emitted from the goroutine running the turn,
//     in order, and never dropped; a slow front end slows the turn.
//   - The whole conversation of a turn stays in history even when the turn
//     fails (E2); reasoning never enters history (E7).
//   - A tool failure is text for the model; only the world breaking, a
//     cancel, or a guard ends a turn.
package engine
