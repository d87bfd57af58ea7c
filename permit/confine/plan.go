package confine

import (
	"encoding/json"
	"fmt"
)

// Plan is what the helper sets up around one command, decided by mm
// before the command starts (Sandbox.Prepare). The helper trusts it, as
// it trusts mm, and reads nothing of the workspace to decide.
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

// landlockPlan is what the weaker mode grants one command, decided by mm
// as a Plan is: writing the directories Dirs and the files Files (the
// workspace's entries that do not run later, runlater.Writable, and the
// private temp directory), and TCP when Network.
type landlockPlan struct {
	Dirs    []string `json:"dirs,omitempty"`
	Files   []string `json:"files,omitempty"`
	Network bool     `json:"network,omitempty"`
}

// args are lp as the helper's command line takes it, up to "--".
func (lp landlockPlan) args() []string {
	var out []string
	for _, d := range lp.Dirs {
		out = append(out, "--write", d)
	}
	for _, f := range lp.Files {
		out = append(out, "--write-file", f)
	}
	if !lp.Network {
		out = append(out, "--no-network")
	}
	return append(out, "--")
}

// request is what an inner helper started ahead of its command reads on
// its socket (helper_linux.go), as one line of JSON: the plan, the
// command, where and with what environment it runs. Its standard input,
// output and error come with it, as descriptors.
type request struct {
	Plan *Plan    `json:"plan,omitempty"`
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
}

// more follows a request on the helper's socket: the read-only paths mm
// learnt only after sending it — the hooks directory, which git takes a
// millisecond or two to name — which the helper binds over the view it
// built meanwhile. Nothing, when the socket ends first.
type more struct {
	ReadOnly []string `json:"readOnly,omitempty"`
}
