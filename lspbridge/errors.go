package lspbridge

import "errors"

// Sentinel errors; compare with errors.Is.
var (
	// ErrNoServer: no configured server on PATH handles the file.
	ErrNoServer = errors.New("no language server for this file")
	// ErrNotReady: the server did not become ready within the bound.
	ErrNotReady = errors.New("language server not ready")
	// ErrServerFailed: the server crashed too often and was given up.
	ErrServerFailed = errors.New("language server failed")
	// ErrClosed: the Manager was closed.
	ErrClosed = errors.New("language servers closed")
)
