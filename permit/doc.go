// Package permit decides what may happen: whether a tool call runs, is
// asked, or is refused. Its sub-packages hold every other decision about
// what a tool call, a command, a workspace file or a child process may do,
// so that an auditor reads one tree:
//
//	permit            the policy over capabilities, modes, rules and answers
//	permit/answers    remembered answers, kept in mm's state directory
//	permit/runlater   files that run later, and what a confined command may write
//	permit/shell      the analysis of a shell line: its commands, where they run,
//	                  what they write, the key an answer covers
//	permit/gitconfig  git's configuration, as git itself reports it, judged by an
//	                  allowlist of settings known to run nothing
//	permit/trust      workspace trust, bound to the content of the files
//	permit/childenv   the environment and secrets given to child processes
//	permit/confine    the confinement of commands: namespaces, or Landlock
//
// Tools ask; they never decide. A tool declares its capabilities and
// describes a call as an approval (tools.Approval); the Policy reads only
// that. The mechanism that confines a command (permit/confine, run by
// mm's own binary) runs what permit/runlater decides it may write.
//
// # Glossary
//
// One word means one thing here, in docs/ and in the code.
//
//   - capability: what a tool, or one call of it, may do (tools.Caps):
//     read the workspace, write it, write outside it, run programs, use the
//     network, write a file that runs later. The policy decides from
//     capabilities, never from a tool's name.
//   - approval: the question one call raises (tools.Approval): its
//     capabilities, its parts, the files it writes, why it runs later.
//   - part: a piece of an approval that a rule or an answer must cover on
//     its own — one simple command of a command line.
//   - key: what a remembered answer covers for a part: a tool's name, a
//     host, or a command's program, subcommand and set of options (or its
//     exact words).
//   - mode: ask, accept-edits, plan or yolo: how much goes ahead without a
//     question.
//   - rule: a permissions.allow or permissions.deny pattern of the user's
//     configuration, matched against a part.
//   - answer: the user's reply to a question — allow once, allow always,
//     reject once, reject always. A remembered answer is an "always" kept
//     for the workspace (permit/answers).
//   - decision: the policy's outcome for an approval (tools.Decision):
//     allowed or not, asked or not, and why in words the model reads.
//   - runs later: a file that makes mm or another program run code later
//     (.git/config, .mm/agent.yaml, .envrc…). A write to one is asked every
//     time, in every mode, and an "always" to it counts once.
//   - trust: the user's acceptance of a workspace's own configuration,
//     bound to the hash of every file that takes part.
//   - refusal: a command mm never runs, whatever the answers (a fork bomb,
//     rm -rf ~, a line bash cannot parse, a bare background job).
//   - sandbox: what confines a command that runs (permit/confine):
//     namespaces, or Landlock where they cannot be created, or none — then
//     no command runs. Confined, a command writes the workspace and its
//     caches, not what runs later, the home directory or mm's files.
//   - child environment: the variables every program mm starts receives;
//     a secret is a value no child receives and every output masks.
//   - grant: what confinement lets a command write (Landlock's word);
//     nothing else — a remembered permission is an answer, trust is trust.
//   - shown: untrusted text as mm shows it (Shown: Visible, then Bound).
//
// # Invariants
//
//   - Trust comes from the user, never from the work: the repository, web
//     pages, tool output and the model's words decide nothing here.
//   - Precedence (Policy.Decide): an approval that declares nothing is
//     refused; a deny rule wins; plan mode refuses what is not read-only;
//     a "never" refuses; a write through a link to a file that runs later
//     is refused, one to such a file asked; then yolo, a hook's opinion,
//     accept-edits, allow rules and "always" answers covering every part;
//     otherwise the user is asked.
//   - An answer covers exactly the effect the user saw: each part by its
//     key, never the whole line by its first word.
//   - Remembered answers and trust records live in mm's state directory,
//     never in the repository.
//   - Where a decision depends on what another program will do, that
//     program is asked (git rev-parse and git config, bash's own parser),
//     and what is allowed is what is known to be safe: an unknown git
//     setting, a form the analysis cannot read, asks.
//   - mm's own configuration, state and trust command are runs-later by
//     path, whatever exists today.
package permit
