package eval

import _ "embed"

// The built-in case sets, run when mm eval is given no file: small enough
// to run on a laptop's model in minutes, varied enough to show a router's
// confusions.
var (
	// builtinRouting is prompt → expected skill or none.
	//
	//go:embed cases/routing.yaml
	builtinRouting []byte
	// builtinTools is prompt → the tool groups it needs.
	//
	//go:embed cases/tools.yaml
	builtinTools []byte
	// builtinTasks are small end-to-end tasks, each verified by a command.
	//
	//go:embed cases/tasks.yaml
	builtinTasks []byte
)
