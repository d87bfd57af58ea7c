// Package line is mm's terminal front end: one turn in line mode (mm -p,
// the answer on stdout and the activity on stderr, or one JSON object per
// event with --json) and the REPL (mm on a terminal). Like the acp
// package it only renders engine events and asks permission questions;
// what a session is made of comes from the composition root through a
// Host, the way acp gets an acp.Builder.
//
// It may import the engine, the tools contract (and tools/workspace for
// the disk environment), engine/store, permit, the exit codes and the line
// editor; never acp, the
// ACP SDK, a tool implementation or cmd/mm's config — cmd/mm/deps_test.go
// holds it to that.
package line
