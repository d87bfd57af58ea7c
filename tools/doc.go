// Package tools is the contract between the engine and the tools a model
// can call: the Tool interface, the Registry that holds the tools offered to
// the model, the Env a tool runs in, and the Result it returns — and what
// a tool declares to the permission tree (package permit): its
// capabilities and the approval a call asks for. Tools ask; permit decides.
//
// Invariants:
//   - A failure the model can fix is a Result with IsError set and a text
//     written as a repair instruction; a Go error means the world broke.
//   - The registry lists tools sorted by name and their schemas are
//     byte-stable, so the request prefix stays cacheable.
//   - This package imports only the standard library; tool implementations
//     live in sub-packages, and one table of the composition root
//     (cmd/mm/internal/app) chooses those a session offers.
package tools
