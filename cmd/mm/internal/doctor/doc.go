// Package doctor is `mm doctor`: it checks a set-up from the config
// to a real tool-call round trip — model server, model, context window,
// fixed prompt, tool calls, reasoning, language servers, MCP servers,
// skills, state directory, workspace trust — and prints one line per
// check, or one JSON object with --json. It checks what the composition
// root built (a Host), so a passing check means a turn gets that far.
//
// It may import the config, the engine's model client and detectors,
// lspbridge's and skills' types, the tools contract, the line front end's
// terminal helpers and the exit codes; never acp, the ACP SDK or a tool
// implementation (cmd/mm/deps_test.go holds it to that).
package doctor
