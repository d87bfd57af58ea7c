package config

import (
	"slices"
	"strings"
	"testing"
)

func TestSandboxKey(t *testing.T) {
	for _, c := range []struct {
		yaml, use, network, err string
		on, net                 bool
	}{
		{yaml: "", on: false, net: true},
		{yaml: "sandbox: on\n", use: "on", on: true, net: true},
		{yaml: "sandbox: landlock\n", use: "landlock", on: true, net: true},
		{yaml: "sandbox: \"off\"\n", use: "off", on: false, net: true},
		{yaml: "sandbox: {use: namespaces, network: off}\n", use: "namespaces", network: "off", on: true, net: false},
		{yaml: "sandbox:\n  use: on\n  network: on\n", use: "on", network: "on", on: true, net: true},
		{yaml: "sandbox: bubblewrap\n", err: `sandbox "bubblewrap" is not one of on, off, namespaces, landlock`},
		{yaml: "sandbox: {use: on, network: maybe}\n", err: `sandbox.network "maybe" is not on or off`},
		{yaml: "sandbox: {network: off}\n", network: "off", on: true, net: false},
		{yaml: "sandbox: {use: off, network: off}\n", err: "only a confined command can be kept off the network"},
		{yaml: "sandbox: {use: on, proxy: x}\n", err: `unknown key "sandbox.proxy"`},
	} {
		var cfg Config
		err := Parse([]byte(c.yaml), &cfg)
		if err == nil {
			err = cfg.Sandbox.validate()
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.yaml, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		if s := cfg.Sandbox; s.Use != c.use || s.Network != c.network || s.On() != c.on || s.NetworkOn() != c.net {
			t.Errorf("%q: %+v on=%v network=%v", c.yaml, s, s.On(), s.NetworkOn())
		}
	}
}

// An untrusted workspace config may make the sandbox only stricter:
// towards namespaces, and the network only off.
func TestSandboxLayering(t *testing.T) {
	for _, c := range []struct {
		user, workspace string
		trusted         bool
		want            Sandbox
		refused         []string
	}{
		{"sandbox: on\n", "sandbox: landlock\n", false, Sandbox{Use: "on"}, []string{"sandbox: landlock (yours: on)"}},
		{"sandbox: on\n", "sandbox: namespaces\n", false, Sandbox{Use: "namespaces"}, nil},
		{"sandbox: landlock\n", "sandbox: on\n", false, Sandbox{Use: "on"}, nil},
		{"sandbox: on\n", "sandbox: {network: off}\n", false, Sandbox{Use: "on", Network: "off"}, nil},
		{"sandbox: {use: on, network: off}\n", "sandbox: {use: on, network: on}\n", false, Sandbox{Use: "on", Network: "off"}, []string{"sandbox.network: on (yours: off)"}},
		{"sandbox: {use: on, network: off}\n", "sandbox: {network: on}\n", true, Sandbox{Use: "on", Network: "on"}, nil},
		{"sandbox: on\n", "sandbox: \"off\"\n", true, Sandbox{Use: "off"}, nil},
		{"sandbox: {network: off}\n", "sandbox: \"off\"\n", false, Sandbox{Network: "off"}, []string{"sandbox: off (yours: on)"}},
		{"sandbox: {network: off}\n", "sandbox: \"off\"\n", true, Sandbox{Use: "off"}, nil},
	} {
		cfg, tr := layered(t, c.user, c.workspace, c.trusted)
		if cfg.Sandbox != c.want {
			t.Errorf("%q over %q (trusted %v): %+v, want %+v", c.workspace, c.user, c.trusted, cfg.Sandbox, c.want)
		}
		var refused []string
		for _, r := range tr.Ignored {
			if strings.HasPrefix(r, "sandbox") {
				refused = append(refused, r)
			}
		}
		if !slices.Equal(refused, c.refused) {
			t.Errorf("%q over %q: refused %q, want %q", c.workspace, c.user, refused, c.refused)
		}
	}
}
