// Package lsptool is the lsp tool: definition,
// references, hover, symbols, diagnostics and rename through the session's
// language servers (lspbridge), with results as short text and locations
// for the editor to follow.
//
// Invariants:
//   - The tool is offered only when a server is available
//     (lspbridge.Manager.Available); the composition root
//     (cmd/mm/internal/app) decides.
//   - Every path the model gives is confined to the workspace
//     (tools.Resolve); a rename that would touch a file outside it is
//     refused before anything is written.
//   - A rename is written only after env.Approve saw its diffs, through
//     env.WriteFile (atomic), to all files or none, and its result ends
//     with the diagnostics delta of the whole rename.
//   - Failures are text for the model; a Go error only when the world
//     broke (the permission prompt could not be asked).
package lsptool
