// Package bash is the `bash` tool: it runs one command line in a
// fresh `bash -c` in the session's working directory and gives the model
// its output and exit code.
//
// Invariants:
//   - Every call is a new shell: nothing (cd, variables) carries over, and
//     stdin is /dev/null, so a command that waits for input fails instead of
//     hanging the turn.
//   - Output goes to a temporary file, never a pipe: a background job that
//     keeps stdout open cannot hold the call open, and at most 1 MiB is read
//     back from each end of the file, so a command that prints gigabytes
//     costs bounded memory.
//   - The shell runs with -o pipefail, so `cmd | tail -20` reports the exit
//     code of cmd, not of tail. The price is that `cmd | head` ends with
//     141 when cmd dies of SIGPIPE; a 141 from a line with a pipe is
//     therefore reported with a note and not counted as a failure.
//   - The shell leads its own session and process group (Setsid). When the
//     call is cut short (timeout, or the turn's context cancelled) the whole
//     group is killed with SIGKILL: the command, its children, and any
//     background job it started in that same call. When the command ends
//     on its own nothing is killed, so a server started on purpose with
//     `nohup … > log 2>&1 &` keeps running after the call returns.
//     Setsid rather than Setpgid also drops the controlling terminal, so
//     sudo, ssh or git asking for a password fail at once instead of
//     reading from the user's terminal.
//   - What a line may do is decided by the permission tree, never here:
//     permit/shell refuses a few commands, analyses the line into the
//     approval that is asked, and says which environment git runs in
//     unasked; permit/childenv gives the command its environment without
//     mm's secrets and masks them in the output; permit/runlater says
//     what a confined command may write.
//   - With a sandbox, every command runs confined by permit/confine — in
//     the editor's terminal too, which runs mm's helper around it — and
//     none runs when the sandbox cannot be set up. A confined command's
//     background jobs keep running after the call returns, as above,
//     until mm exits.
//   - Everything the model can act on is a Result; a Go error means bash
//     could not be started, the temporary file failed, or the context was
//     cancelled (the process group is killed first).
package bash
