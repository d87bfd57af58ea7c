package logfile

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mm-agent/mm/permit/childenv"
)

// Open sends logs to the file when given (--log, MM_LOG). Otherwise
// the ACP agent logs to stderr, which editors keep in their agent log,
// while the terminal front ends (line mode, doctor) keep the terminal for
// what is meant for the user and log to mm.log in the state directory
// (nowhere when it cannot be written). The API key is masked in every
// message and value: a server that echoes it in an error must not put it
// into a log file.
//
// toStderr is the ACP agent's choice; stateDir is mm's state directory
// ("" for none). known is read at every record, so keys learned later are
// masked too.
func Open(path string, stderr io.Writer, toStderr bool, stateDir string, known *childenv.Secrets) (*slog.Logger, func(), error) {
	opts := &slog.HandlerOptions{Level: slog.LevelDebug, ReplaceAttr: redact(known)}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot open the log file: %w", err)
		}
		return slog.New(slog.NewTextHandler(f, opts)), func() { f.Close() }, nil
	}
	opts.Level = slog.LevelInfo
	if toStderr {
		return slog.New(slog.NewTextHandler(stderr, opts)), func() {}, nil
	}
	if stateDir != "" && os.MkdirAll(stateDir, 0o755) == nil {
		if f, err := openRotating(filepath.Join(stateDir, "mm.log"), maxLogBytes); err == nil {
			return slog.New(slog.NewTextHandler(f, opts)), func() { f.Close() }, nil
		}
	}
	return slog.New(slog.DiscardHandler), func() {}, nil
}

// redact masks the secrets in log attributes (the message is one too),
// those learned later included (a config read again names a new key).
func redact(known *childenv.Secrets) func([]string, slog.Attr) slog.Attr {
	return func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindGroup {
			return a
		}
		s := a.Value.String()
		if m := known.Mask(s); m != s {
			return slog.String(a.Key, m)
		}
		return a
	}
}
