package tools

import "strings"

// Caps is what a tool, or one call of it, may do. The Policy decides from
// these alone — never from a tool's name or kind — so a mode, an answer or a
// rule means the same for every tool, and a new tool is judged by what it
// declares. The zero value declares nothing and is refused: a tool that
// does not say what it does never runs.
type Caps uint16

// The capabilities. A call that may do several things has all of them.
const (
	// Reads the workspace (and nothing else): read-only.
	Reads Caps = 1 << iota
	// WritesWorkspace changes files inside the workspace.
	WritesWorkspace
	// WritesOutside changes files outside the workspace.
	WritesOutside
	// RunsPrograms runs a program (a command line, an MCP server's tool).
	RunsPrograms
	// Network reaches another machine.
	Network
	// WritesRunLater writes a file that some program runs or obeys later
	// (.git/config, .mm/agent.yaml, .vscode/tasks.json…): a write that is
	// code.
	WritesRunLater
)

// Anything is every capability: what a tool that cannot tell (an MCP
// server's tool) must be taken to do.
const Anything = Reads | WritesWorkspace | WritesOutside | RunsPrograms | Network | WritesRunLater

var capNames = []struct {
	c    Caps
	name string
}{
	{Reads, "reads the workspace"},
	{WritesWorkspace, "writes the workspace"},
	{WritesOutside, "writes outside the workspace"},
	{RunsPrograms, "runs programs"},
	{Network, "uses the network"},
	{WritesRunLater, "writes a file that runs later"},
}

// String lists the capabilities in words, for a question or a refusal.
func (c Caps) String() string {
	if c == 0 {
		return "declares nothing"
	}
	var ws []string
	for _, n := range capNames {
		if c&n.c != 0 {
			ws = append(ws, n.name)
		}
	}
	return strings.Join(ws, ", ")
}
