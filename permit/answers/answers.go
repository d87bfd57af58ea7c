// Package answers keeps the remembered answers of each workspace — the
// user's "always allow" and "always reject" — in mm's state directory,
// never in the repository, which a cloned project could ship with answers
// already given.
package answers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/mm-agent/mm/fileedit/disk"
)

// Answer is one remembered "always allow" or "always reject": the tool
// and the key the answer was given for (the tool name, the host for
// fetch_content, a command's key for bash).
type Answer struct {
	Tool    string `json:"tool"`
	Key     string `json:"key"`
	Allowed bool   `json:"allowed"`
}

// Store is the remembered answers of every workspace, one file each. Safe
// for concurrent use.
type Store struct {
	file func(workspace string) string
	log  *slog.Logger
	mu   sync.Mutex // the read-modify-write of a file (Remember)
}

// Open returns the store whose file for a workspace is file(workspace)
// (engine/store lays out the state directory). A nil logger discards the
// lines about unreadable files.
func Open(file func(workspace string) string, log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{file: file, log: log}
}

// Load returns the answers remembered for the workspace. A corrupt file
// is skipped with a log line: the user is simply asked again.
func (s *Store) Load(workspace string) []Answer {
	path := s.file(workspace)
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("cannot read remembered permissions", "file", path, "err", err)
		}
		return nil
	}
	var f struct {
		Answers []Answer `json:"grants"` // the name files have always had
	}
	if err := json.Unmarshal(b, &f); err != nil {
		s.log.Warn("skipped a corrupt permissions file", "file", path, "err", err)
		return nil
	}
	return f.Answers
}

// Remember adds or replaces the answer for (tool, key) in the
// workspace's file.
func (s *Store) Remember(workspace string, a Answer) error {
	// Serialised so that two sessions of a workspace answering at once
	// both keep their answer.
	s.mu.Lock()
	defer s.mu.Unlock()
	as := slices.DeleteFunc(s.Load(workspace), func(o Answer) bool { return o.Tool == a.Tool && o.Key == a.Key })
	as = append(as, a)
	b, err := json.MarshalIndent(map[string]any{"cwd": workspace, "grants": as}, "", "  ")
	if err != nil {
		return fmt.Errorf("remember permission: %w", err)
	}
	path := s.file(workspace)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("remember permission: %w", err)
	}
	return disk.WriteAtomic("", path, b, 0o600)
}
