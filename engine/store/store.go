package store

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mm-agent/mm/engine/llm"
)

// Store is a directory of sessions and permission answers. Its methods are
// safe for concurrent use: every write goes to its own temporary file and
// is renamed into place.
type Store struct {
	dir string
	log *slog.Logger

	providersMu sync.Mutex // the read-modify-write of a workspace's providers file (UpdateProviders)

	mu   sync.Mutex
	sess map[string]*sessState // by session id, for Save's order
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

// Save writes the record atomically, mode 0600. Saves of one session are
// ordered by the record's Seq: a snapshot older than the one on disk is
// dropped (nil), so a mid-turn save finishing late never replaces the
// turn's final one. A file written by another mm since this writer's
// snapshot was loaded is never replaced (ErrChanged), nor one whose turn
// is running in another mm (ErrInUse).
func (s *Store) Save(r *Record) error {
	if !validID(r.ID) {
		return fmt.Errorf("save session %q: %w", r.ID, ErrBadID)
	}
	path := s.sessionPath(r.Cwd, r.ID)
	st := s.state(r.ID)
	// st.mu orders the writes of this one session's files and guards st;
	// nothing else waits on it.
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.deleted {
		return nil // deleted by the user: nothing more is kept
	}
	if st.leases == 0 {
		unlock, err := lockFile(path)
		if err != nil {
			return fmt.Errorf("save session %s: %w", r.ID, err)
		}
		defer unlock()
	}
	var at head // what the file on disk holds
	if d, ok := s.onDisk(st, path); ok {
		at = d
		switch {
		case r.Seq == 0:
			// Unordered (a record not made by a session): written.
		case d.Writer != "" && d.Writer == r.Writer:
			if d.Seq >= r.Seq {
				return nil // a newer snapshot of this writer is there
			}
		case d.Seq != r.Base:
			return fmt.Errorf("save session %s: %w", r.ID, ErrChanged)
		}
	}
	w := *r
	w.Version = Version
	w.Logged, w.LogBytes = 0, 0
	// The entries that will not change go to the replay log once; the
	// record keeps the rest. A save writes what changed since the last
	// one: O(turn), not O(session).
	if final := min(r.Final, len(r.Replay)); final > 0 && final >= at.Logged {
		off := at.LogBytes
		if final > at.Logged {
			var err error
			if off, err = appendLog(logPath(path), at.LogBytes, r.Replay[at.Logged:final]); err != nil {
				return err
			}
		}
		w.Logged, w.LogBytes = final, off
	}
	// else the record holds the whole replay: a snapshot whose replay
	// does not extend the log (not made by this session) replaces it.
	w.Replay = r.Replay[w.Logged:]
	// The history is appended to as well, until the engine rewrites it
	// (a compaction: a new HistGen); the record then holds it whole once.
	w.HistLogged, w.HistBytes = 0, 0
	if r.HistGen == at.HistGen && len(r.History) >= at.HistLogged {
		off := at.HistBytes
		if len(r.History) > at.HistLogged {
			h, err := r.whole(at.HistLogged)
			if err != nil {
				return err
			}
			if off, err = appendLog(histPath(path), at.HistBytes, h); err != nil {
				return err
			}
		}
		w.HistLogged, w.HistBytes = len(r.History), off
	}
	var err error
	if w.History, err = r.whole(w.HistLogged); err != nil {
		return err
	}
	b, err := json.Marshal(&w)
	if err != nil {
		return fmt.Errorf("save session %s: %w", r.ID, err)
	}
	if err := writeAtomic(path, b); err != nil {
		return err
	}
	st.disk = head{Writer: w.Writer, Base: w.Base, Seq: w.Seq, Logged: w.Logged, LogBytes: w.LogBytes,
		HistGen: w.HistGen, HistLogged: w.HistLogged, HistBytes: w.HistBytes}
	st.ino, st.known = 0, false
	if ino, ok := inode(path); ok {
		st.ino, st.known = ino, true
	}
	return nil
}

// logPath is the replay log beside the session file at path.
func logPath(path string) string {
	return strings.TrimSuffix(path, ".json") + ".replay"
}

// histPath is the history log beside the session file at path.
func histPath(path string) string {
	return strings.TrimSuffix(path, ".json") + ".history"
}

// appendLog writes items, one JSON line each, at offset off of the log
// at path (what lies beyond off was never committed by a record: a save
// that failed half-way), syncs, and returns the new committed length.
func appendLog[T any](path string, off int64, items []T) (int64, error) {
	var b []byte
	for _, e := range items {
		line, err := json.Marshal(e)
		if err != nil {
			return 0, fmt.Errorf("save session: %w", err)
		}
		b = append(append(b, line...), '\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Truncate(off); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteAt(b, off); err != nil {
		f.Truncate(off)
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return off + int64(len(b)), nil
}

// readLog reads the n items of a log that a record commits: its first
// size bytes.
func readLog[T any](path string, size int64, n int) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read the session's log: %w", err)
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("session log %s is short: %w", path, err)
	}
	out := make([]T, 0, n)
	for line := range bytes.Lines(b) {
		var e T
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("session log %s is corrupt: %w", path, err)
		}
		out = append(out, e)
	}
	if len(out) != n {
		return nil, fmt.Errorf("session log %s holds %d items, the session %d", path, len(out), n)
	}
	return out, nil
}

// head is what Save needs of the file on disk: its stamp and how much
// of the replay log it commits.
type head struct {
	Writer   string `json:"writer,omitempty"`
	Base     int64  `json:"base,omitempty"`
	Seq      int64  `json:"seq,omitempty"`
	Logged   int    `json:"logged,omitempty"`
	LogBytes int64  `json:"logBytes,omitempty"`

	HistGen    int64 `json:"histGen,omitempty"`
	HistLogged int   `json:"histLogged,omitempty"`
	HistBytes  int64 `json:"histBytes,omitempty"`
}

// Stamp says which snapshot of a session a file or a writer holds:
// Writer is the token of the session object that wrote it (one per
// process that opened the session), Base the Seq it was loaded at, Seq
// its number in the writer's order of snapshots.
type Stamp struct {
	Writer string `json:"writer,omitempty"`
	Base   int64  `json:"base,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
}

// sessState is what this process knows of one session's file.
type sessState struct {
	mu     sync.Mutex
	leases int    // turns of this process holding the file's lock
	holder string // the writer whose turns hold it
	unlock func() // lets the lock go, when the last lease ends
	disk   head   // the head of the file last read or written here,
	ino    uint64 // whose inode this is
	known  bool
	// deleted: Delete removed the session; a save still under way in
	// this process (a turn winding down) must not bring it back.
	deleted bool
}

func (s *Store) state(id string) *sessState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		s.sess = map[string]*sessState{}
	}
	st := s.sess[id]
	if st == nil {
		st = &sessState{}
		s.sess[id] = st
	}
	return st
}

// onDisk is the stamp of the file at path (false when there is none),
// read again only when another writer replaced it. Called with st.mu.
func (s *Store) onDisk(st *sessState, path string) (head, bool) {
	ino, ok := inode(path)
	if !ok {
		return head{}, false
	}
	if st.known && ino == st.ino {
		return st.disk, true
	}
	var d head
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil {
		// Unreadable: it holds nothing a save could lose.
		s.log.Warn("replacing an unreadable session file", "file", path, "err", err)
		return head{}, false
	}
	st.disk, st.ino, st.known = d, ino, true
	return d, true
}

// Acquire holds the session's file for the length of a turn: no other mm
// may write it meanwhile. It fails with ErrInUse while another mm runs a
// turn of the session, and with ErrChanged when another mm wrote the
// session since the writer w loaded it (its turn would otherwise replace
// that one). release is called once the turn is saved.
func (s *Store) Acquire(cwd, id string, w Stamp) (release func(), err error) {
	if !validID(id) {
		return nil, fmt.Errorf("session %q: %w", id, ErrBadID)
	}
	path := s.sessionPath(cwd, id)
	st := s.state(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.leases > 0 && st.holder != w.Writer:
		// Another session object of this process (a second load of the
		// same id) runs a turn: to it, that is another mm.
		return nil, fmt.Errorf("session %s: %w", id, ErrInUse)
	case st.leases > 0:
		// The same session's next turn while the last one is still
		// winding down (a prompt sent right after a cancel): flock would
		// refuse a second lock of this process's own file, so the lease
		// is shared.
	default:
		unlock, err := lockFile(path)
		if err != nil {
			return nil, fmt.Errorf("session %s: %w", id, err)
		}
		if d, ok := s.onDisk(st, path); ok && !(d.Writer != "" && d.Writer == w.Writer) && d.Seq != w.Base {
			unlock()
			return nil, fmt.Errorf("session %s: %w", id, ErrChanged)
		}
		st.holder, st.unlock = w.Writer, unlock
	}
	st.leases++
	var once sync.Once
	return func() {
		once.Do(func() {
			st.mu.Lock()
			defer st.mu.Unlock()
			if st.leases--; st.leases == 0 {
				st.unlock()
				st.holder, st.unlock = "", nil
			}
		})
	}, nil
}

// lockPath is the lock file of the session file at path: hidden, so
// that listings see sessions only.
func lockPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+strings.TrimSuffix(filepath.Base(path), ".json")+".lock")
}

// lockFile takes the lock beside the session file at path (its own file:
// the session file is replaced at every save).
func lockFile(path string) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(lockPath(path), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errBusy) {
			return nil, ErrInUse
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() { unlockFile(f) }, nil
}

// LoadIn reads the session with this id for the workspace cwd. A session
// belongs to the workspace it was started in: loading it from another
// is refused (a *WorkspaceError, which is ErrOtherWorkspace), so a session
// never leaves its workspace's history and two workspaces never write
// one file.
func (s *Store) LoadIn(cwd, id string) (*Record, error) {
	r, err := s.Load(id)
	if err != nil {
		return nil, err
	}
	if !sameDir(r.Cwd, cwd) {
		return nil, &WorkspaceError{ID: id, Cwd: r.Cwd}
	}
	return r, nil
}

// sameDir reports whether a and b name one directory, through links.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
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
	if r.Logged > 0 {
		logged, err := readLog[Entry](logPath(path), r.LogBytes, r.Logged)
		if err != nil {
			return nil, err
		}
		r.Replay = append(logged, r.Replay...)
	}
	if r.HistLogged > 0 {
		logged, err := readLog[llm.Message](histPath(path), r.HistBytes, r.HistLogged)
		if err != nil {
			return nil, err
		}
		r.History = append(logged, r.History...)
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
				os.Remove(logPath(path))
				os.Remove(histPath(path))
				os.Remove(lockPath(path))
			}
			continue
		}
		out = append(out, sum)
	}
	return out
}

// Delete removes the session with this id, whatever its workspace: its
// record, logs and lock. A session whose turn runs (here or in another
// mm) is not removed (ErrInUse): the front end ends its own turn first.
// Saves of the session made later by this process are dropped.
func (s *Store) Delete(id string) error {
	if !validID(id) {
		return fmt.Errorf("%q: %w", id, ErrBadID)
	}
	matches, _ := filepath.Glob(filepath.Join(s.dir, "sessions", "*", id+".json"))
	if len(matches) == 0 {
		return fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	st := s.state(id)
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.leases > 0 {
		return fmt.Errorf("delete session %s: %w", id, ErrInUse)
	}
	for _, path := range matches {
		unlock, err := lockFile(path)
		if err != nil {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
		err = os.Remove(path)
		os.Remove(logPath(path))
		os.Remove(histPath(path))
		os.Remove(lockPath(path))
		unlock()
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete session %s: %w", id, err)
		}
	}
	st.deleted, st.known = true, false
	return nil
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

// AnswersFile is where the remembered answers of the workspace cwd are
// kept (permit/answers): permissions/<workspace>.json.
func (s *Store) AnswersFile(cwd string) string {
	return filepath.Join(s.dir, "permissions", workspaceKey(cwd)+".json")
}
