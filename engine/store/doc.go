// Package store keeps sessions on disk under mm's state directory, and
// says where the remembered answers of each workspace lie beside them
// (AnswersFile; permit/answers reads and writes them) — never inside the
// repository, which a cloned project could ship with answers already
// given.
//
// Layout under the directory given to Open ($XDG_STATE_HOME/mm):
//
//	sessions/<workspace>/<id>.json     a session's record
//	sessions/<workspace>/<id>.history  its history, appended to
//	sessions/<workspace>/<id>.replay   what the user saw, appended to
//	sessions/<workspace>/.<id>.lock    held by the mm running a turn of it
//	permissions/<workspace>.json       remembered answers of a workspace (permit/answers)
//
// where <workspace> is the base name of the working directory and a hash
// of its absolute path.
//
// Invariants:
//   - Every record is written atomically (temporary file, fsync,
//     rename) with mode 0600 in directories of mode 0700: a crash leaves
//     the old version or the new one, never half of one. The logs are
//     appended to and synced before the record that commits their new
//     length is renamed in place; what lies beyond that length (a save
//     that failed half-way) is ignored, then overwritten.
//   - A save writes what changed since the last one (O(turn)); what one
//     replay entry keeps is bounded (Tool.Bound): a diff is the change
//     and its context, not the file twice. The history is written whole
//     once more only after the engine rewrote it (a compaction).
//   - A session belongs to the workspace it was started in: LoadIn
//     refuses it elsewhere, and a save never moves it.
//   - One writer at a time: a turn holds the session's lock (Acquire),
//     and saves are ordered by the writer's stamp, so an older snapshot
//     never replaces a newer one and a stale writer never replaces
//     another's turn.
//   - A record holds no secret: the API key is never part of it.
//   - A corrupt or half-written file is skipped with one log line by List
//     and reported as an error by Load; the store never panics on bad
//     input.
package store
