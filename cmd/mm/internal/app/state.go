package app

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/mm-agent/mm/cmd/mm/internal/config"
	"github.com/mm-agent/mm/engine/store"
)

// StateDir is where mm keeps what it writes for itself (the line mode's
// log): $XDG_STATE_HOME/mm, else ~/.local/state/mm. It is not created here.
func StateDir(env config.Env) (string, error) {
	if d := env.Get("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "mm"), nil
	}
	home, err := env.Home()
	if err != nil || home == "" {
		return "", errors.New("no home directory: set XDG_STATE_HOME")
	}
	return filepath.Join(home, ".local", "state", "mm"), nil
}

// ConfigLine is a config error as the one line the user sees.
func ConfigLine(err error) string {
	return strings.TrimPrefix(err.Error(), config.ErrInvalid.Error()+": ")
}

// OpenStore opens the session store in mm's state directory.
// Without one, mm keeps nothing and says so in the log.
func OpenStore(env config.Env, log *slog.Logger) *store.Store {
	dir, err := StateDir(env)
	if err != nil {
		log.Warn("sessions are not saved: no state directory", "err", err)
		return nil
	}
	return store.Open(dir, log)
}
