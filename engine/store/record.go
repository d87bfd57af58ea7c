package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mm-agent/mm/engine/llm"
	"github.com/mm-agent/mm/tools"
)

// Version is the record format; a newer one is read as far as it goes.
const Version = 1

// Record is one session as stored.
type Record struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Title   string `json:"title"`
	Cwd     string `json:"cwd"`
	// Dirs are the session's other roots, beside Cwd, as it last used
	// them (ACP additionalDirectories).
	Dirs     []string `json:"additionalDirectories,omitempty"`
	Provider string   `json:"provider,omitempty"`
	Model    string   `json:"model,omitempty"`
	// Mode is the permission mode (ask, accept-edits, plan, yolo).
	Mode string `json:"mode,omitempty"`
	// Thought is the chosen thought level, "" for the configured one.
	Thought string `json:"thoughtLevel,omitempty"`
	// Reasoned says the model streamed reasoning in this session (the
	// thought level picker is shown again after a restart).
	Reasoned bool      `json:"reasoned,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	// Turns is the number of prompts so far; a session without any is
	// loadable but not listed (every editor panel opens one).
	Turns int `json:"turns"`
	// CallSeq is the last tool call number used, so a loaded session
	// never reuses the id of a call the editor already shows.
	CallSeq int `json:"callSeq"`
	// History is the engine's conversation, the authoritative one sent
	// to the model (compacted when the engine compacts it).
	History []llm.Message `json:"history"`
	// Replay is what the user saw, replayed by session/load.
	Replay []Entry `json:"replay"`
	// Errors are the failed turns, each with the model that produced it.
	Errors []Failure `json:"errors,omitempty"`
	// Final is how many leading Replay entries will not change any more
	// (those of a running turn come after): Save writes them to the
	// session's replay log once. Not stored.
	Final int `json:"-"`
	// Logged is how many replay entries are in the replay log, whose
	// first LogBytes bytes the record commits; Replay holds the others
	// on disk (Load returns the whole replay).
	Logged   int   `json:"logged,omitempty"`
	LogBytes int64 `json:"logBytes,omitempty"`
	// HistGen changes whenever the engine rewrote the history rather
	// than appended to it (a compaction): HistLogged messages are in the
	// session's history log, its first HistBytes bytes, History holds
	// the others on disk (Load returns the whole history).
	HistGen    int64 `json:"histGen,omitempty"`
	HistLogged int   `json:"histLogged,omitempty"`
	HistBytes  int64 `json:"histBytes,omitempty"`
	// Writer, Base and Seq order the saves of the session (see Stamp).
	Writer string `json:"writer,omitempty"`
	Base   int64  `json:"base,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	// Spilled, when set, gives the whole content of History[i] when the
	// session keeps it on disk rather than in memory (a masked tool
	// output, whose Content is then its stub): spilled is false for the
	// others. Save calls it for the messages it writes. Not stored.
	Spilled func(i int) (content string, spilled bool, err error) `json:"-"`
}

// whole is History[from:], with the contents Spilled gives read back.
func (r *Record) whole(from int) ([]llm.Message, error) {
	h := r.History[from:]
	if r.Spilled == nil {
		return h, nil
	}
	out := slices.Clone(h)
	for i := range out {
		c, ok, err := r.Spilled(from + i)
		if err != nil {
			return nil, fmt.Errorf("save session %s: %w", r.ID, err)
		}
		if ok {
			out[i].Content = c
		}
	}
	return out, nil
}

// Clone is a copy of the entry that shares nothing that can change.
func (e Entry) Clone() Entry {
	if e.Tool != nil {
		t := *e.Tool
		t.Input = slices.Clone(t.Input)
		t.Locations = slices.Clone(t.Locations)
		t.Diffs = slices.Clone(t.Diffs)
		e.Tool = &t
	}
	return e
}

// CloneEntries copies entries deeply.
func CloneEntries(es []Entry) []Entry {
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = e.Clone()
	}
	return out
}

// EntryKind says what a replay entry shows.
type EntryKind string

// Replay entry kinds.
const (
	EntryUser  EntryKind = "user"
	EntryAgent EntryKind = "agent"
	// EntryNote is mm's struggle note; Level is warning or severe.
	EntryNote EntryKind = "note"
	EntryTool EntryKind = "tool"
	// EntryCompaction is a summary of earlier turns as it ended; Text is
	// the summary (or why it failed).
	EntryCompaction EntryKind = "compaction"
)

// Entry is one thing shown to the user.
type Entry struct {
	Kind  EntryKind `json:"kind"`
	Text  string    `json:"text,omitempty"`
	Level string    `json:"level,omitempty"`
	Tool  *Tool     `json:"tool,omitempty"`
	// Message is the id the user's or the model's message was shown with
	// (EntryUser, EntryAgent); "" in sessions saved before ids.
	Message string `json:"messageId,omitempty"`
	// Steered marks a user's message sent while a turn ran (EntryUser):
	// shown in its place, not counted as a turn of its own.
	Steered bool `json:"steered,omitempty"`
	// Compaction is set on an EntryCompaction.
	Compaction *Compaction `json:"compaction,omitempty"`
}

// Compaction is how a compaction ended: its id, status (completed,
// failed, cancelled), the estimated prompt tokens before and after, and
// how many turns it summarised.
type Compaction struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Before int    `json:"before,omitempty"`
	After  int    `json:"after,omitempty"`
	Turns  int    `json:"turns,omitempty"`
}

// Tool is a tool call as it ended.
type Tool struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Name is the tool's name as the model called it.
	Name      string           `json:"name,omitempty"`
	Kind      tools.Kind       `json:"kind"`
	Status    string           `json:"status"`
	Input     json.RawMessage  `json:"input,omitempty"`
	Locations []tools.Location `json:"locations,omitempty"`
	Diffs     []tools.Diff     `json:"diffs,omitempty"`
	// Output is the preview the user saw (the first lines).
	Output string `json:"output,omitempty"`
}

// Failure is a turn that failed, and who produced it.
type Failure struct {
	Time     time.Time `json:"time"`
	Provider string    `json:"provider,omitempty"`
	Model    string    `json:"model,omitempty"`
	Text     string    `json:"text"`
}

// Summary is what a listing shows of a session.
type Summary struct {
	ID      string    `json:"id"`
	Turns   int       `json:"turns"`
	Title   string    `json:"title"`
	Cwd     string    `json:"cwd"`
	Dirs    []string  `json:"additionalDirectories,omitempty"`
	Updated time.Time `json:"updated"`
}

// Title makes a session title from its first prompt: the first non-empty
// line, at most 80 characters.
func Title(prompt string) string {
	for _, l := range strings.Split(prompt, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if r := []rune(l); len(r) > 80 {
			return string(r[:79]) + "…"
		}
		return l
	}
	return "(empty prompt)"
}
