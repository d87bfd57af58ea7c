package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Grant is one remembered "always allow" or "always reject" answer: the
// tool and the key the answer was given for (the tool name, or the
// command prefix for bash).
type Grant struct {
	Tool    string `json:"tool"`
	Key     string `json:"key"`
	Allowed bool   `json:"allowed"`
}

func (s *Store) grantsPath(cwd string) string {
	return filepath.Join(s.dir, "permissions", workspaceKey(cwd)+".json")
}

// Grants returns the answers remembered for the workspace cwd. A corrupt
// file is skipped with a log line: the user is simply asked again.
func (s *Store) Grants(cwd string) []Grant {
	path := s.grantsPath(cwd)
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("cannot read remembered permissions", "file", path, "err", err)
		}
		return nil
	}
	var f struct {
		Cwd    string  `json:"cwd"`
		Grants []Grant `json:"grants"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		s.log.Warn("skipped a corrupt permissions file", "file", path, "err", err)
		return nil
	}
	return f.Grants
}

// Remember adds or replaces the answer for (tool, key) in the workspace's
// file.
func (s *Store) Remember(cwd string, g Grant) error {
	// The read-modify-write of one small file is serialised so two
	// sessions of a workspace answering at once both keep their answer.
	s.grantsMu.Lock()
	defer s.grantsMu.Unlock()
	gs := slices.DeleteFunc(s.Grants(cwd), func(o Grant) bool { return o.Tool == g.Tool && o.Key == g.Key })
	gs = append(gs, g)
	b, err := json.MarshalIndent(map[string]any{"cwd": cwd, "grants": gs}, "", "  ")
	if err != nil {
		return fmt.Errorf("remember permission: %w", err)
	}
	return writeAtomic(s.grantsPath(cwd), b)
}
