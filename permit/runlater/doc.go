// Package runlater says which files make mm or another program run code
// later — git's config and hooks, mm's own configuration, editor tasks,
// direnv, CI workflows — so that a write to one is asked every time, in
// every mode, and what a confined command may write leaves them out.
//
// Invariants:
//   - A file is judged by where a write lands: every link on the way
//     followed, and a file that runs later reached under another name (a
//     link named like one) is that file.
//   - Writable never grants a directory that holds a file that runs later:
//     it grants entry by entry down to it.
package runlater
