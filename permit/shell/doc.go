// Package shell analyses a bash command line before it runs: every simple
// command it holds (in lists, pipelines, subshells, $(…), the scripts of
// bash -c and eval), the directory each runs in (cd, pushd, popd), the
// files it may write, the key an "always" answer covers for it, the git
// repository each git command uses and whether that repository's config
// runs programs, and the commands mm refuses outright. It never runs
// anything: the line is read with a real bash parser (mvdan.cc/sh), and
// bash itself parses what runs.
//
// Invariants:
//   - A line bash cannot parse is refused; a form the analysis cannot
//     follow is asked, never covered by an answer or a rule.
//   - Refusals are a safety net against a small model's slips, not a
//     sandbox: the question is the gate.
package shell
