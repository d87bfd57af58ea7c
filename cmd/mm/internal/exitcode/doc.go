// Package exitcode holds mm's process exit codes, the one table every
// command of cmd/mm returns from: scripts tell a failed turn from a
// mistaken command line by them. It imports nothing.
package exitcode
