package confine

import (
	"encoding/json"
	"fmt"
)

// Plan is what the helper sets up around one command, decided by mm
// before the command starts (Sandbox.Prepare). It travels as JSON on the
// helper's command line: the helper trusts it, as it trusts mm, and reads
// nothing of the workspace to decide.
type Plan struct {
	// Writable are the directories the command may write, bound writable
	// at their own path: the workspace roots and the build caches.
	Writable []string `json:"writable,omitempty"`
	// ReadOnly are bound read-only over what Writable opens: the files and
	// directories that run later, mm's own config and state, the home
	// directory when a workspace holds it.
	ReadOnly []string `json:"readOnly,omitempty"`
	// Null are socket files left visible that /dev/null covers: the
	// sockets the session's variables name (SSH_AUTH_SOCK in the home).
	Null []string `json:"null,omitempty"`
	// Tmp is the host directory the command sees as /tmp: private to one
	// mm, kept across its commands.
	Tmp string `json:"tmp,omitempty"`
	// Network lets the command reach the network; false gives it a
	// network namespace with only a loopback interface.
	Network bool `json:"network,omitempty"`
	// Keep names the socket variables the user keeps (bashEnv.keep).
	Keep []string `json:"keep,omitempty"`
	// Probe sets everything up and runs nothing: whether namespaces work
	// here, and if not why.
	Probe bool `json:"probe,omitempty"`
}

func (p Plan) encode() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // a Plan holds strings and bools only
	}
	return string(b)
}

func decodePlan(s string) (Plan, error) {
	var p Plan
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, fmt.Errorf("read the plan: %w", err)
	}
	return p, nil
}
