package skills

import (
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"sync"

	"github.com/mm-agent/mm/internal/textdist"
)

// Set is the skills found in some sources, by name.
type Set struct {
	sorted []Skill
	byName map[string]int
}

// Load reads the sources, nearest first: on a name clash the skill of the
// earlier source wins. Skipped files are returned as warnings.
func Load(srcs ...Source) (*Set, []Warning) {
	s := &Set{byName: map[string]int{}}
	var warns []Warning
	for _, src := range srcs {
		found, w := src.load()
		warns = append(warns, w...)
		for _, sk := range found {
			if _, dup := s.byName[sk.Name]; dup {
				continue
			}
			s.byName[sk.Name] = len(s.sorted)
			s.sorted = append(s.sorted, sk)
		}
	}
	sort.Slice(s.sorted, func(i, j int) bool { return s.sorted[i].Name < s.sorted[j].Name })
	for i, sk := range s.sorted {
		s.byName[sk.Name] = i
	}
	return s, warns
}

// All returns the skills sorted by name.
func (s *Set) All() []Skill {
	if s == nil {
		return nil
	}
	return s.sorted
}

// Lookup finds a skill by exact name.
func (s *Set) Lookup(name string) (Skill, bool) {
	if s == nil {
		return Skill{}, false
	}
	i, ok := s.byName[name]
	if !ok {
		return Skill{}, false
	}
	return s.sorted[i], true
}

// Names lists the skill names, sorted.
func (s *Set) Names() []string {
	var out []string
	for _, sk := range s.All() {
		out = append(out, sk.Name)
	}
	return out
}

// Catalog is one line per skill — name, description, keywords — for the
// read_skill tool's description. Empty when there is no skill.
func (s *Set) Catalog() string {
	var b strings.Builder
	for _, sk := range s.All() {
		fmt.Fprintf(&b, "- %s: %s", sk.Name, sk.Description)
		if len(sk.Keywords) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(sk.Keywords, ", "))
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// Nearest returns up to n skill names closest to name: a shared prefix
// first, then by edit distance; names too far to be a typo are left out.
func (s *Set) Nearest(name string, n int) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, sk := range s.All() {
		d := textdist.Levenshtein(name, sk.Name)
		if strings.HasPrefix(sk.Name, name) || strings.HasPrefix(name, sk.Name) || strings.Contains(sk.Name, name) {
			d = min(d, 1)
		}
		if d <= max(2, len(name)/3) {
			cs = append(cs, cand{sk.Name, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// Library is the live skill set of a workspace: Current reloads the
// sources when a skill file was added, removed or edited since the last
// look (compared by name, size and modification time — no watcher
// goroutine, no polling: it looks when asked). Safe for concurrent use.
type Library struct {
	srcs []Source

	mu    sync.Mutex
	set   *Set
	warns []Warning
	print string
	gen   int
}

// NewLibrary is the library of the sources, nearest first. It reads
// nothing: the first Current loads them, so that a session can be opened
// (and answered) before its skills are parsed.
func NewLibrary(srcs ...Source) *Library {
	return &Library{srcs: srcs}
}

// Current returns the skill set, the warnings of its last load, and a
// generation number that grows each time the set was reloaded.
func (l *Library) Current() (set *Set, warns []Warning, gen int) {
	print := fingerprint(l.srcs)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == nil || print != l.print {
		l.set, l.warns = Load(l.srcs...)
		l.print = print
		l.gen++
	}
	return l.set, l.warns, l.gen
}

// fingerprint summarises the sources' skill files: a change in any of
// them changes it.
func fingerprint(srcs []Source) string {
	var b strings.Builder
	for i, src := range srcs {
		if src.Dir == "" {
			continue // embedded: never changes
		}
		fmt.Fprintf(&b, "%d\x00", i)
		fs.WalkDir(src.FS, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if strings.Count(p, "/") > 2 {
				return fs.SkipDir
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			fmt.Fprintf(&b, "%s %d %d\x00", p, info.Size(), info.ModTime().UnixNano())
			return nil
		})
	}
	return b.String()
}
