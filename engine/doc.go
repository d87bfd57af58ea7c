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
//     fails; reasoning never enters history.
//   - With a store, the session (history, the transcript the user saw,
//     title, mode, model, failures) is written after every turn, a
//     cancelled or failed one included, before its TurnEnd is emitted; a
//     store that cannot be written is a warning, never a failed turn.
//   - The user's choices (model, thought level, notes about a mode
//     change) change only what follows: notes join the next user message,
//     so the cached prefix of the conversation is never rewritten.
//   - Steering: what the user sends while a turn runs (an Inbox) joins
//     the conversation as a user message before the turn's next model
//     call — after the tool calls of the last answer have run, never
//     inside one — through the same preGeneration hooks as a prompt. A
//     turn that would end with a message waiting goes on instead; one
//     put after the turn decided to end is refused (Put is false), so the
//     front end starts a turn with it, and the turn ends once.
//   - A tool failure is text for the model; only the world breaking, a
//     cancel, or a detector (a loop, a runaway call) ends a turn.
//   - A prompt answered locally (Rewrite.Answer) leaves history alone,
//     unless the rewriter keeps it (Rewrite.Keep: /ask-<name>), and then
//     as a user/assistant pair, so roles keep alternating.
package engine
