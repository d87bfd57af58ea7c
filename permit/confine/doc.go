// Package confine runs a command confined: the mechanism behind the
// sandbox key, which decides nothing of what a command may do beyond
// what it is given — the workspace roots to write, the files that run
// later to keep read-only, the caches, the network.
//
// On Linux a confined command gets its own namespaces (user, mount, pid,
// IPC, and network when sandbox.network is off), set up by mm's own
// binary in its hidden `__sandbox` mode (helper_linux.go), started ahead
// of the command so that its start-up is not the command's
// (spare_linux.go). In them:
//
//   - the whole file system is read-only, the workspace roots and the
//     build caches writable (new files at a root included), and every
//     file and directory that runs later that exists when the command
//     starts — .git, .mm, .vscode, .envrc, what a link of such a name
//     leads to, the core.hooksPath directory, the files mm's config
//     names — read-only again over them, as are mm's own config and state
//     and the home directory;
//   - /tmp is a directory private to this mm (kept across its commands,
//     removed when it exits); /var/tmp, /run and /dev/shm are empty, so
//     no socket of the user's session is there to reach; the variables
//     naming such sockets (TMUX, SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS,
//     DISPLAY…) are not passed unless the user keeps them (bashEnv.keep),
//     and a socket one names outside those directories is covered;
//   - /proc shows the command's own processes only: mm and every other
//     process are out of reach of ptrace, signals and /proc/<pid>;
//   - no capability is left (bounding, inheritable and ambient sets
//     emptied, no_new_privs), so the command cannot undo a mount, and a
//     user namespace it creates inside finds every mount locked;
//   - where the kernel has Landlock's scopes (6.12+), abstract Unix
//     sockets and signals outside the command's domain are refused too.
//
// After the command, a file that runs later that it created is taken back
// out (aside.go). Where namespaces cannot be created (unprivileged user
// namespaces disabled) `sandbox: on` falls back to Landlock, the weaker
// mode, with a ⚠ line naming what it cannot do — mm confines a thread of
// its own and starts the command from it (start_linux.go); a sandbox
// that cannot be set up at all runs no command.
//
// Invariants:
//   - A command never runs unconfined because confinement failed: the
//     helper exits with SetupFailed before starting it, and a thread
//     Landlock could not confine starts nothing.
//   - The helper trusts only its plan, which mm wrote; it reads nothing
//     of the workspace to decide.
//   - One helper, one command: each command gets new namespaces and a
//     view built when it starts, from the plan decided then.
//   - Nothing outside the command's namespaces changes while it sets up:
//     every mount is a copy in its own mount namespace.
package confine
