package main

import (
	"errors"
	"path/filepath"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
)

// stateDir is where mm keeps what it writes for itself (the line mode's
// log): $XDG_STATE_HOME/mm, else ~/.local/state/mm. It is not created here.
func stateDir(env config.Env) (string, error) {
	if d := env.Get("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mm"), nil
	}
	home, err := env.Home()
	if err != nil || home == "" {
		return "", errors.New("no home directory: set XDG_STATE_HOME")
	}
	return filepath.Join(home, ".local", "state", "mm"), nil
}
