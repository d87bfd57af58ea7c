package config

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Sandbox is the sandbox key: `sandbox: on`, or with the network cut,
// `sandbox: {use: on, network: off}`.
type Sandbox struct {
	// Use is on (the strongest confinement this system allows),
	// namespaces or landlock (that one, or no command runs), or off ("").
	Use string `yaml:"use"`
	// Network is on ("": the default) or off: confined commands then get
	// no network but their own loopback.
	Network string `yaml:"network"`
}

// UnmarshalYAML accepts the short form, a value of use.
func (s *Sandbox) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = Sandbox{Use: n.Value}
		return nil
	}
	type plain Sandbox
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*s = Sandbox(p)
	return nil
}

// On reports whether commands are to be confined: network: off alone
// asks for it too — only a confined command can be kept off the network.
func (s Sandbox) On() bool { return s.Want() != "off" }

// Want is what use asks for, on when only the network was set off.
func (s Sandbox) Want() string {
	switch {
	case s.Use != "":
		return s.Use
	case s.Network == "off":
		return "on"
	}
	return "off"
}

// NetworkOn reports whether confined commands reach the network: they
// do unless the config says off — build tools fetch dependencies, and
// the sandbox is about what a command may write and reach of the session.
func (s Sandbox) NetworkOn() bool { return s.Network != "off" }

func (s Sandbox) validate() error {
	switch s.Use {
	case "", "off", "on", "namespaces", "landlock":
	default:
		return fmt.Errorf("sandbox %q is not one of on, off, namespaces, landlock", s.Use)
	}
	switch s.Network {
	case "", "on", "off":
	default:
		return fmt.Errorf("sandbox.network %q is not on or off", s.Network)
	}
	if s.Network == "off" && s.Use == "off" {
		return fmt.Errorf("sandbox: {use: off, network: off} — only a confined command can be kept off the network: write use: on")
	}
	return nil
}

// strength orders the values of use from off to the strictest:
// namespaces refuses commands where on would fall back to Landlock.
func strength(use string) int {
	switch use {
	case "landlock":
		return 1
	case "on":
		return 2
	case "namespaces":
		return 3
	}
	return 0
}
