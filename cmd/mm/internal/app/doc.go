// Package app is mm's per-workspace composition: it turns a config into
// a model connector, the one tool registry, engine sessions and the
// hosts the front ends take (acp.Builder, line.Host, doctor.Host). It
// holds the wiring of what the config names — skills and the skill
// router, language servers, MCP servers, hooks, asked agents, decision
// and guard agents, workspace trust (/trust and the files that make mm
// run code later), the environment of every program mm starts — and
// the ACP agent (ACPAgent), which reads the config again at each session
// and builds a new App when the config reads differently.
//
// It may import every mm package but test code, and only cmd/mm's main
// imports it (the other packages of cmd/mm/internal get a Host of funcs
// from it); cmd/mm/deps_test.go holds it to that. Process globals
// (flags, signals, the working directory, os.Environ) stay in cmd/mm's
// main: an App gets its environment and directory passed in.
package app
