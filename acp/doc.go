// Package acp is mm's Agent Client Protocol front end: it serves the agent
// over stdio with github.com/coder/acp-go-sdk, turns prompts into engine
// turns, renders engine events as session updates, and asks permission in
// the editor.
//
// Invariants:
//   - Nothing but JSON-RPC is written to stdout: malformed or oversized
//     input lines get a JSON-RPC error, logs go to the logger.
//   - Every request gets exactly one answer (JSON-RPC 2.0): an empty method
//     name or an id that is not a string or a number is answered -32600
//     by the stdin filter (id null when it cannot be echoed), a prompt
//     block mm did not advertise or does not know is answered -32602
//     naming its type — never dropped.
//   - A config error does not stop the agent: initialize is answered and
//     every request that needs a session gets the one line (Options.ConfigError).
//   - Updates of one session are sent in order, from the goroutine running
//     the turn.
//   - A cancelled turn answers stopReason "cancelled" — never an error,
//     never end_turn — and its final updates are still delivered.
//   - The session, not the SDK, owns the cancel of its current turn: a
//     new prompt cancels the one it replaces, session/cancel always
//     reaches the latest, session/close cancels it and waits for it.
//   - EOF on stdin: running turns are cancelled, every request already
//     read is answered, then the SDK sees the end and Serve returns.
//   - A session's / menu (available_commands_update) goes out after the
//     answer that opened the session (new, load, resume), never before:
//     the transport watches that answer being written.
//   - session/load replays the whole stored transcript before it answers;
//     the engine stores it after every turn, so what the editor shows after
//     a restart is what it showed before. Modes and config options are two
//     views of one state: setting either updates the other.
//   - providers/list, set and disable (unstable) are answered by mm from
//     the stdin reader, in the schema's shape (providerId), not by the
//     SDK; the local servers are surveyed at providers/list only, never
//     on the initialize path. session/new looks for one (Setup.Ready) only
//     when no server is configured, and answers auth_required when none
//     answers, so that the client offers mm's set-up.
//   - A question that is not a tool's permission (/trust) is a form
//     (elicitation/create, tied to its session) only when the client
//     advertised elicitation.form; mm writes that request itself (ids
//     "mm-N"), takes its answer out of the input before the SDK sees it,
//     and reads anything but an accepted, ticked form as no.
//   - _session/steering is decided by the stdin reader in input order:
//     a prompt read before it is "running" even before its handler
//     began, so a correction sent right behind its prompt steers it
//     (steering.go). Nothing is echoed live; the replay shows it.
//   - Subagent sessions (asked and guard agents) exist only for a client
//     that advertised clientCapabilities.subagents; a child is announced
//     on its parent before any of its traffic, and session/cancel with
//     its id stops it alone; it is not saved on its own — load of its
//     id names the parent to load (subagents.go).
//   - A session's roots are cwd and its additionalDirectories; load and
//     resume take the request's list as the whole list.
//   - The package stays thin: it imports the engine (with its model client
//     and session store), the tools contract, permit and the one bounded
//     reader (fileedit/disk), never a tool implementation, lspbridge or
//     fileedit's editing, so the SDK can be upgraded in a day.
package acp
