package main

import (
	"errors"
	"os"
	"path/filepath"
)

// stateDir is where mm keeps what it writes for itself (the line mode's
// log): $XDG_STATE_HOME/mm, else ~/.local/state/mm. It is not created here.
func stateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mm"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return "", errors.New("no home directory: set XDG_STATE_HOME")
	}
	return filepath.Join(home, ".local", "state", "mm"), nil
}
