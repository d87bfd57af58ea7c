// Package lspbridge is mm's language server client: it runs gopls,
// pyright and any configured server, tells them about every edit, and
// turns what they report into short text for a small model — above all,
// after an edit, the problems that edit introduced and not the ones the
// files already had.
//
// A Manager owns the servers of a session. The edit tools call Before
// (before writing) and After (once written) around each write and append
// the text After returns to their result; bash calls Changed with the
// files it touched; the lsp tool calls Definition, References, Hover,
// DocumentSymbols, WorkspaceSymbols, Diagnostics, and Rename then Apply.
//
// Invariants:
//   - A server is used only when its binary is on PATH; there is at most
//     one per (language, root), the root found by the language's markers.
//     Starting one never blocks the caller: Warm and Before return at once.
//   - Every server request gets an answer (null for the unknown ones):
//     pyright exits when told "method not found".
//   - mm's copy of each open document is the server's copy: full text,
//     increasing versions, sent as raw JSON (the typed didChange of
//     go.lsp.dev/protocol v0.12.0 always carries a range and corrupts it).
//   - Waiting is on events, never on sleeps: the server's own "diagnostics
//     done" progress when it reports one (gopls with
//     verboseWorkDoneProgress), else the edited version's diagnostics
//     followed by a short quiet period; for a server that reports open
//     files only and answers textDocument/diagnostic (pyright), the
//     checked files' diagnostics pulled. Every wait is bounded — by what
//     the server needed for the session's earlier checks, between
//     Config.Wait and Config.MaxWait, and MaxWait for a server's first
//     check (wait.go) — and an unanswered wait says "diagnostics
//     incomplete" or "not checked", never "no problems".
//   - A check whose result was given incomplete goes on in the
//     background when the edit asked for it (Snapshot.DeliverLate): what
//     it finds is given once to the session's Late (late.go); a later
//     change of its files supersedes it, and an answer about files that
//     changed since is dropped.
//   - The delta compares diagnostics by file, severity, code, source and
//     message, with line numbers carried through the edit.
//   - A server that reports open files only (pyright) is given, for the
//     length of the check, the files that import the edited ones (at most
//     maxImporters, the nearest, found by a scan of import lines), which
//     are compared before and after like the edited files and closed
//     again; the result says what was checked ("no problems in greet.py;
//     3 files that import it checked"), never a bare "no problems".
//   - A crashed server is restarted with bounded backoff and its documents
//     reopened; the restart is reported in the next result. Close sends
//     shutdown and exit, kills the process group, and reaps every process;
//     every goroutine is joined by Close.
//   - The package imports no other package of mm but the one bounded
//     reader (fileedit/disk): files are written by a function the caller
//     passes (Apply), so its atomic writer is used.
package lspbridge
