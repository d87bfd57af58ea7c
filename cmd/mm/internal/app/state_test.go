package app

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
)

// TestStateDir: mm's own files (sessions, trust, the log) go under an
// absolute $XDG_STATE_HOME, else under the home directory — never under
// a relative path, which would put them in whatever directory mm runs
// in, a repository included.
func TestStateDir(t *testing.T) {
	home := t.TempDir()
	xdg := t.TempDir()
	tests := []struct {
		name string
		env  config.Env
		want string // "" : no state directory
	}{
		{"xdg", config.Env{"HOME=" + home, "XDG_STATE_HOME=" + xdg}, filepath.Join(xdg, "mm")},
		{"relative xdg ignored", config.Env{"HOME=" + home, "XDG_STATE_HOME=state"}, filepath.Join(home, ".local", "state", "mm")},
		{"home", config.Env{"HOME=" + home}, filepath.Join(home, ".local", "state", "mm")},
		{"neither", config.Env{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := StateDir(tt.env)
			if tt.want == "" {
				if err == nil {
					t.Errorf("StateDir = %q, want an error", got)
				}
				if f := TrustFile(tt.env); f != "" {
					t.Errorf("TrustFile = %q without a state directory, want none", f)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("StateDir = %q, %v; want %q", got, err, tt.want)
			}
			if f := TrustFile(tt.env); f != filepath.Join(tt.want, "trust.json") {
				t.Errorf("TrustFile = %q, want it in %s", f, tt.want)
			}
		})
	}
}

// TestConfigLine: the user sees the config's own words, without the
// sentinel's prefix the errors carry for errors.Is.
func TestConfigLine(t *testing.T) {
	err := fmt.Errorf("%w: .mm/agent.yaml: unknown key \"modle\" (did you mean \"model\"?)", config.ErrInvalid)
	if got, want := ConfigLine(err), ".mm/agent.yaml: unknown key \"modle\" (did you mean \"model\"?)"; got != want {
		t.Errorf("ConfigLine = %q, want %q", got, want)
	}
}
