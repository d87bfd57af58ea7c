// Package agents holds the asked agents of mm's config (agents:): other
// agent files that the chat model (the ask_<name> tool) and the user
// (/ask-<name>) can put one question to. An asked agent answers in a
// session of its own, built by the composition root, through a read-only
// view of the asking session's environment: every approval to change a
// file or run a program is refused before anyone is asked, and a write
// through the view fails. That boundary is a security one — a question
// must never become a way around the user's permissions — and this
// package's tests hold it directly.
//
// It may import the engine, the tools contract, tools/ask and permit;
// never acp, the ACP SDK or cmd/mm's config (cmd/mm/deps_test.go holds it
// to that).
package agents
