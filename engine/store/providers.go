package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Endpoint is one model server the user set from the editor (ACP
// providers/set): the protocol it speaks and its API base.
type Endpoint struct {
	APIType string `json:"apiType"`
	BaseURL string `json:"baseUrl"`
}

// Providers is the user's choice of model servers for one workspace: the
// servers set by id, the ids disabled, and the one the next sessions use.
// It lives in the state directory, never in the repository, so a cloned
// project cannot make that choice for the user.
type Providers struct {
	// Active is the id of the server the next sessions use; "" is the
	// configured one.
	Active   string              `json:"active,omitempty"`
	Set      map[string]Endpoint `json:"set,omitempty"`
	Disabled []string            `json:"disabled,omitempty"`
}

func (s *Store) providersPath(cwd string) string {
	return filepath.Join(s.dir, "providers", workspaceKey(cwd)+".json")
}

// Providers returns the choice remembered for the workspace cwd; a
// missing or corrupt file is no choice (a corrupt one is logged).
func (s *Store) Providers(cwd string) Providers {
	path := s.providersPath(cwd)
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("cannot read the remembered model servers", "file", path, "err", err)
		}
		return Providers{}
	}
	var f struct {
		Providers Providers `json:"providers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		s.log.Warn("skipped a corrupt model servers file", "file", path, "err", err)
		return Providers{}
	}
	return f.Providers
}

// UpdateProviders changes the workspace's choice with change and writes
// it atomically; reads and writes are serialised, so two changes at once
// both count.
func (s *Store) UpdateProviders(cwd string, change func(*Providers)) error {
	s.providersMu.Lock()
	defer s.providersMu.Unlock()
	p := s.Providers(cwd)
	change(&p)
	b, err := json.MarshalIndent(map[string]any{"cwd": cwd, "providers": p}, "", "  ")
	if err != nil {
		return fmt.Errorf("remember the model servers: %w", err)
	}
	return writeAtomic(s.providersPath(cwd), b)
}
