// Package mcp offers the tools of MCP servers (the editor's, from ACP
// session/new, and those of mm's config) as registry tools, through the
// official MCP Go SDK.
//
// Invariants:
//   - Servers are connected in parallel, each bounded by
//     Options.StartTimeout; one that fails is one line in Set.Notes and
//     the others still serve.
//   - Tool names are <server>_<tool>, sanitized to [a-z0-9_] and made
//     unique; descriptions are cut to Options.MaxDescription and schemas
//     marshalled with sorted keys, so the tool list (and the prompt prefix)
//     is the same at every start.
//   - Every call asks permission (an "always" answer is remembered per
//     tool) and is bounded by Options.CallTimeout; a server that crashes,
//     hangs or answers nonsense is a repair text for the model and a ⚠
//     line for the user, never a hung turn.
//   - Close ends every server: stdin closed, then the process group
//     killed, so no process is left behind.
package mcp
