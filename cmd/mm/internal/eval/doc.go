// Package eval is `mm eval`: it scores what mm would run against
// case sets — the skill router (prompt → skill: hits, misses, extras,
// confusion pairs, latency), the tool router (prompt → tool groups: wrong
// drops, groups dropped, how often the offered tool list changes) and the
// chat model (small tasks played in a temp directory, each verified by a
// shell command) — as a table or as JSON. It measures what the
// composition root built (a Host), so a score is the score of a real turn's
// parts; the built-in case sets are embedded here.
//
// It may import the engine, its decision client, the skills' types, the
// tools contract, permit, the line front end's terminal asker and the exit
// codes;
// never acp, the ACP SDK, the config or a tool implementation
// (cmd/mm/deps_test.go holds it to that).
package eval
