//go:build race

package engine_test

// raceEnabled: the tests run under the race detector, where a long
// session costs many times its CPU; the size tests then play a shorter
// one (the figures docs/sessions.md quotes come from a run without -race).
const raceEnabled = true
