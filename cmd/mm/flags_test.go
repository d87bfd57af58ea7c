package main

import (
	"io"
	"slices"
	"testing"
)

// TestParseFlagsPromptAfterSessionFlags: -p takes the prompt even when
// mm's own flags come between them: `mm -p --resume ID --yes "x"` runs
// the prompt "x", not "--yes".
func TestParseFlagsPromptAfterSessionFlags(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		prompt, resume string
		yes, json      bool
		config         string
		rest           []string
	}{
		{args: []string{"-p", "--resume", "sess_1", "--yes", "x"}, prompt: "x", resume: "sess_1", yes: true},
		{args: []string{"-p", "--yes", "--json", "x"}, prompt: "x", yes: true, json: true},
		{args: []string{"-p", "--yes", "-c", "a.yaml", "x"}, prompt: "x", yes: true, config: "a.yaml"},
		{args: []string{"-p", "--log=l.txt", "--yes", "x"}, prompt: "x", yes: true},
		{args: []string{"-p", "x", "--yes"}, prompt: "x", yes: true},
		{args: []string{"--resume", "sess_1", "-p", "x", "--yes"}, prompt: "x", resume: "sess_1", yes: true},
		{args: []string{"-p", "-", "--yes"}, prompt: "-", yes: true},
		{args: []string{"-p", "-x is broken"}, prompt: "-x is broken"},
		{args: []string{"-p", "--yes"}, prompt: "--yes"}, // nothing else: as the flag package reads it
		{args: []string{"-p", "--resume", "fix it"}, prompt: "fix it"},
	} {
		f, rest, err := parseFlags(nil, tc.args, io.Discard, io.Discard)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if f.prompt != tc.prompt || f.resume != tc.resume || f.yes != tc.yes || f.json != tc.json || f.config != tc.config || !slices.Equal(rest, tc.rest) {
			t.Errorf("%q: prompt %q resume %q yes %v json %v config %q rest %q, want %q %q %v %v %q %q",
				tc.args, f.prompt, f.resume, f.yes, f.json, f.config, rest, tc.prompt, tc.resume, tc.yes, tc.json, tc.config, tc.rest)
		}
	}
}
