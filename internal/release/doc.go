// Release builds mm's release: the binary for the six platforms an
// editor's agent registry knows, each in an archive with the binary at
// its root (.tar.gz, .zip for Windows), their SHA-256 sums, and the
// registry entry (agent.json and icon.svg) ready to be proposed to the
// ACP registry (github.com/agentclientprotocol/registry).
//
//	go run ./internal/release v1.2.3        (or ./scripts/release v1.2.3)
//	go run ./internal/release -check        cross-compile every platform, write nothing
//
// The release goes to dist/v1.2.3/: the archives
// mm-1.2.3-<platform>.<ext>, SHA256SUMS, and registry/mm/. The archives'
// URLs are those of the GitHub release of tag v1.2.3, which the registry
// reads; the tag, the upload and the registry's pull request are the
// maintainer's.
//
// Its invariants:
//   - A release is built from a clean checkout of a commit: the version
//     and the commit are stamped into the binary (mm --version), and the
//     same commit gives the same archives byte for byte (every file
//     carries the commit's time; -trimpath; no cgo).
//   - -check builds exactly what a release builds, with the same flags,
//     so that CI fails where a release would, and the release test's
//     build finds its packages compiled.
//
// It is a small Go program rather than GoReleaser: the registry entry is
// generated from the same list of platforms, the test that runs the
// registry's checks on the Linux archive calls the same code, and CI
// needs nothing installed beyond Go.
package main
