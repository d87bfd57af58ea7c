// Package setup is `mm setup`, the first run: it finds the model servers
// answering on this machine (the usual local ports, the server the user's
// config names, and MM_BASE_URL), lists their models, lets the user pick
// one — with the arrow keys on a terminal, by number otherwise — plays
// mm doctor's tool-call round trip on the choice, and saves it in the
// user's own config. It is also what an editor runs in a terminal when mm
// answers that it needs setting up (the ACP terminal auth method).
//
// Its invariants:
//   - It writes the user's own config only (config.SaveChoice), never a
//     workspace's .mm/agent.yaml, and only a choice whose round trip
//     worked; every other key and comment of the file is kept.
//   - With no server answering it prints one line saying how to start one
//     on this system and exits non-zero; nothing is written.
//
// It may import the config, the model client, mm doctor's round trip,
// the line front end's terminal helpers and the exit codes; never acp, the ACP SDK or a
// tool implementation (cmd/mm/deps_test.go holds it to that).
package setup
