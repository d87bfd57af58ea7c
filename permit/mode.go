package permit

import "strings"

// Mode is a permission mode: how much goes ahead without a question.
type Mode string

// The modes, with the ids ACP clients show.
const (
	// ModeAsk (the default): edits, writes and commands ask.
	ModeAsk Mode = "ask"
	// ModeAcceptEdits: edits and writes of workspace files, and commands
	// proven to only read the workspace, apply without asking; other
	// commands, the network and files that run later still ask.
	ModeAcceptEdits Mode = "accept-edits"
	// ModePlan is read-only: only calls that declare themselves
	// read-only go ahead (or ask, as the other modes would: the network,
	// a command proven to only read — ls, grep, git log — unless a rule or
	// an answer allows it); everything else — edits, other commands, MCP
	// tools, a fetch that saves — is refused without a question.
	ModePlan Mode = "plan"
	// ModeYolo: nothing asks.
	ModeYolo Mode = "yolo"
)

// Modes lists every mode, in the order a picker shows them.
var Modes = []Mode{ModeAsk, ModeAcceptEdits, ModePlan, ModeYolo}

// ParseMode returns the mode with this id.
func ParseMode(s string) (Mode, bool) {
	for _, m := range Modes {
		if string(m) == s {
			return m, true
		}
	}
	return "", false
}

// ModeIDs is the list of valid ids, for error messages.
func ModeIDs() string {
	ids := make([]string, len(Modes))
	for i, m := range Modes {
		ids[i] = string(m)
	}
	return strings.Join(ids, ", ")
}

// Name is the mode's label in a picker.
func (m Mode) Name() string {
	switch m {
	case ModeAcceptEdits:
		return "Accept edits"
	case ModePlan:
		return "Plan (read-only)"
	case ModeYolo:
		return "Yolo"
	}
	return "Ask"
}

// Description says what the mode does, in the picker.
func (m Mode) Description() string {
	switch m {
	case ModeAcceptEdits:
		return "Edits, writes and read-only commands apply without asking; other commands still ask."
	case ModePlan:
		return "Read-only: nothing is written; only read-only commands run; the model plans."
	case ModeYolo:
		return "Nothing asks: edits and commands go ahead."
	}
	return "Edits, writes and commands ask first."
}

// PlanNote and its counterpart tell the model about plan mode; they go at
// the head of the next user message, never in the system prompt, so the
// cached prefix survives the switch.
const (
	PlanNote    = "[mm: plan mode — read-only. Read and search as you need (read-only commands such as ls, grep or git log may run), but do not edit, write or run other commands: they will be refused. Answer with a plan: the files to change and how.]"
	PlanEndNote = "[mm: plan mode is over — you may edit files and run commands again.]"
)
