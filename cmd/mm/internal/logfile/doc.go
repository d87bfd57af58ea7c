// Package logfile opens mm's log: the file --log or MM_LOG names, else
// stderr for the ACP agent (editors keep it in their agent log), else
// mm.log in the state directory for the terminal front ends, bounded by
// rotation. Every record has the known API keys masked.
//
// It may import the standard library and permit/childenv (for its set of
// known secrets) only.
package logfile
