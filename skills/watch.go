package skills

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// settle is how long a burst of file events (an editor saving writes
// several) is coalesced before the skills are looked at again.
const settle = 150 * time.Millisecond

// Watch calls changed, from the calling goroutine, each time the skill set
// was reloaded because a file in a skills folder was added, edited or
// removed since generation since (what the caller last showed, from
// Current), so that the editor's / menu follows. It watches the skills
// folders, their skill folders, and for a folder that does not exist yet
// its nearest existing parent, so creating .mm/skills is seen too. It
// returns when ctx ends, or at once with the error when the system gives
// no watcher (the set is then still reloaded at each Current).
func (l *Library) Watch(ctx context.Context, since int, changed func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	gen := since
	l.watchDirs(w)
	if _, _, g := l.Current(); g != gen { // changed before the watches were set
		gen = g
		changed()
	}
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-w.Events:
			if !ok {
				return nil
			}
			if timer == nil {
				timer = time.NewTimer(settle)
				fire = timer.C
			} else {
				timer.Reset(settle)
			}
		case _, ok := <-w.Errors:
			if !ok {
				return nil
			}
		case <-fire:
			timer, fire = nil, nil
			l.watchDirs(w)
			if _, _, g := l.Current(); g != gen {
				gen = g
				changed()
			}
		}
	}
}

// watchDirs adds the folders to watch; adding one twice is harmless. For a
// skills folder that does not exist yet it watches the nearest existing
// parent, then looks again: a folder created between the look and the
// watch would give no event, so it walks down while the next folder on the
// path now exists — and the caller reloads after this returns, so nothing
// created before a watch was set is missed.
func (l *Library) watchDirs(w *fsnotify.Watcher) {
	for _, src := range l.srcs {
		if src.Dir == "" {
			continue
		}
		dir := nearestExisting(src.Dir)
		for {
			w.Add(dir)
			if dir == src.Dir {
				break
			}
			next := childOnPath(dir, src.Dir)
			if _, err := os.Stat(next); err != nil {
				break
			}
			dir = next
		}
		if dir != src.Dir {
			continue
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() {
				w.Add(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// nearestExisting is dir or its nearest parent that exists.
func nearestExisting(dir string) string {
	for {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}

// childOnPath is the folder one level below ancestor on the way to dir.
func childOnPath(ancestor, dir string) string {
	for {
		parent := filepath.Dir(dir)
		if parent == ancestor || parent == dir {
			return dir
		}
		dir = parent
	}
}
