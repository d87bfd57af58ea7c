package store

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Store is a directory of sessions and permission answers. Its methods are
// safe for concurrent use: every write goes to its own temporary file and
// is renamed into place.
type Store struct {
	dir string
	log *slog.Logger

	grantsMu sync.Mutex // see Remember
}

// Open returns the store rooted at dir (created on first write). A nil
// logger discards the lines about skipped files.
func Open(dir string, log *slog.Logger) *Store {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Store{dir: dir, log: log}
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// validID: a session id is 1 to 128 ASCII letters, digits, '_' or '-', so
// it is a safe file name. A loop, not a regexp: a counted repetition
// compiles into 128 copies at every start (1,700 allocations).
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// workspaceKey names a workspace's folder: readable and unique.
func workspaceKey(cwd string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(cwd)))
	base := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return '_'
	}, filepath.Base(cwd))
	if len(base) > 40 {
		base = base[:40]
	}
	return base + "-" + hex.EncodeToString(sum[:6])
}

func (s *Store) sessionPath(cwd, id string) string {
	return filepath.Join(s.dir, "sessions", workspaceKey(cwd), id+".json")
}

// Save writes the record atomically, mode 0600.
func (s *Store) Save(r *Record) error {
	if !validID(r.ID) {
		return fmt.Errorf("save session %q: %w", r.ID, ErrBadID)
	}
	r.Version = Version
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("save session %s: %w", r.ID, err)
	}
	path := s.sessionPath(r.Cwd, r.ID)
	if err := writeAtomic(path, b); err != nil {
		return err
	}
	// A session loaded in another working directory moved there: its old
	// file goes, so the id names one file.
	old, _ := filepath.Glob(filepath.Join(s.dir, "sessions", "*", r.ID+".json"))
	for _, o := range old {
		if o != path {
			os.Remove(o)
		}
	}
	return nil
}

// Load reads the session with this id, whatever its workspace.
func (s *Store) Load(id string) (*Record, error) {
	if !validID(id) {
		return nil, fmt.Errorf("%q: %w", id, ErrBadID)
	}
	matches, _ := filepath.Glob(filepath.Join(s.dir, "sessions", "*", id+".json"))
	if len(matches) == 0 {
		return nil, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	return readRecord(matches[0])
}

func readRecord(path string) (*Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("session file %s is corrupt: %w", path, err)
	}
	if r.ID == "" {
		return nil, fmt.Errorf("session file %s has no id", path)
	}
	return &r, nil
}

// List returns the sessions of the workspace cwd ("" for every
// workspace) that had at least one turn, newest first. A file that cannot be read is skipped with one
// log line.
// unusedKept is how long the file of a session never prompted is kept: a
// client may still load it meanwhile.
const unusedKept = 24 * time.Hour

func (s *Store) List(cwd string) []Summary {
	dirs := []string{filepath.Join(s.dir, "sessions", workspaceKey(cwd))}
	if cwd == "" {
		dirs, _ = filepath.Glob(filepath.Join(s.dir, "sessions", "*"))
	}
	var out []Summary
	for _, dir := range dirs {
		out = append(out, s.list(dir, cwd)...)
	}
	slices.SortFunc(out, func(a, b Summary) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out
}

func (s *Store) list(dir, cwd string) []Summary {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("cannot list sessions", "dir", dir, "err", err)
		}
		return nil
	}
	var out []Summary
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		var sum Summary
		if err == nil {
			err = json.Unmarshal(b, &sum)
		}
		if err == nil && sum.ID == "" {
			err = errors.New("no id")
		}
		if err != nil {
			s.log.Warn("skipped an unreadable session file", "file", path, "err", err)
			continue
		}
		if cwd != "" && filepath.Clean(sum.Cwd) != filepath.Clean(cwd) {
			continue // a hash collision, or a file moved by hand
		}
		if sum.Turns == 0 {
			// Opened, never used (an editor opens a session each time its
			// panel does): not listed, and removed once it is a day old,
			// so they do not pile up.
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > unusedKept {
				os.Remove(path)
			}
			continue
		}
		out = append(out, sum)
	}
	return out
}

// Latest returns the newest session of the workspace (line mode's
// --continue).
func (s *Store) Latest(cwd string) (*Record, error) {
	for _, sum := range s.List(cwd) {
		r, err := s.Load(sum.ID)
		if err == nil {
			return r, nil
		}
		s.log.Warn("skipped an unreadable session", "id", sum.ID, "err", err)
	}
	return nil, fmt.Errorf("no saved session in %s: %w", cwd, ErrNotFound)
}

// writeAtomic replaces path with data: a temporary file in the same
// directory, synced, then renamed over the old one.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// NewID returns a fresh session id.
func NewID() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return "sess_" + hex.EncodeToString(b)
}
