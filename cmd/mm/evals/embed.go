// Package evals holds the default case sets of `mm eval` (C5).
package evals

import _ "embed"

// Routing is the default routing eval: prompt → expected skill or none.
//
//go:embed routing.yaml
var Routing []byte

// Tasks is the default task eval: small end-to-end tasks, each verified
// by a command.
//
//go:embed tasks.yaml
var Tasks []byte

// Tools is the default tool-routing eval: prompt → the tool groups it
// needs.
//
//go:embed tools.yaml
var Tools []byte
