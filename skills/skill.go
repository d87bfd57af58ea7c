package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxKeywords is the most keywords a skill may declare: the catalog
// sits in a tool description and every keyword costs prompt.
const MaxKeywords = 8

// Skill is one parsed skill.
type Skill struct {
	Name        string
	Description string
	Keywords    []string
	// Hint is the input hint of the skill's slash command ("version").
	Hint string
	// Body is the Markdown after the front matter.
	Body string
	// Path is the skill file (absolute on disk; "shipped:NAME" for the
	// embedded ones).
	Path string
	// Files are the skill folder's other files (absolute), which the model
	// can open with read_file.
	Files []string
}

// frontMatter is what a skill file may declare. Keys of the Agent Skills
// format that mm does not use (license, allowed-tools, metadata…) are
// accepted and ignored: users' existing skills must load.
type frontMatter struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Keywords    []string `yaml:"keywords"`
	Hint        string   `yaml:"argument-hint"`
}

// validName: a skill name is 1 to 64 lower-case ASCII letters, digits,
// '_' or '-', not starting with '_' or '-' (it is typed after '/' or '$').
// A loop, not a regexp compiled at every start.
func validName(name string) bool {
	if name == "" || len(name) > 64 || name[0] == '_' || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Parse reads one skill file. fallback names the skill when the front
// matter has no name (its folder, or the file name without .md).
func Parse(data []byte, fallback string) (Skill, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return Skill{}, errors.New("no front matter (the file must start with a --- line, then name and description, then ---)")
	}
	head, body, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return Skill{}, errors.New("the front matter is not closed by a --- line")
	}
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[i+1:]
	} else {
		body = ""
	}
	var fm frontMatter
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return Skill{}, fmt.Errorf("front matter: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	s := Skill{Name: strings.TrimSpace(fm.Name), Description: oneLine(fm.Description), Hint: oneLine(fm.Hint), Body: strings.TrimSpace(body)}
	if s.Name == "" {
		s.Name = fallback
	}
	switch {
	case !validName(s.Name):
		return Skill{}, fmt.Errorf("name %q must be lowercase letters, digits, - or _ (at most 64)", s.Name)
	case s.Description == "":
		return Skill{}, errors.New("description is missing (one line saying when to use the skill)")
	case len(fm.Keywords) > MaxKeywords:
		return Skill{}, fmt.Errorf("%d keywords, at most %d", len(fm.Keywords), MaxKeywords)
	case s.Body == "":
		return Skill{}, errors.New("the skill has no steps after the front matter")
	}
	for _, k := range fm.Keywords {
		if k = oneLine(k); k != "" {
			s.Keywords = append(s.Keywords, k)
		}
	}
	return s, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Source is one place skills are found.
type Source struct {
	// FS holds the skills at its root.
	FS fs.FS
	// Dir is FS's directory on disk, to name files absolutely; "" for an
	// embedded source.
	Dir string
}

// Warning is a skill file that was skipped.
type Warning struct {
	Path string
	Err  error
}

func (w Warning) String() string { return fmt.Sprintf("skill %s skipped: %v", w.Path, w.Err) }

// load reads the skills of one source, sorted by name. A missing folder
// is no skills, not a warning.
func (src Source) load() ([]Skill, []Warning) {
	entries, err := fs.ReadDir(src.FS, ".")
	if err != nil {
		return nil, nil
	}
	var out []Skill
	var warns []Warning
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		var file, fallback string
		switch {
		case e.IsDir() || e.Type()&fs.ModeSymlink != 0:
			file, fallback = path.Join(name, "SKILL.md"), name
			if _, err := fs.Stat(src.FS, file); err != nil {
				continue // a folder without SKILL.md is not a skill
			}
		case strings.HasSuffix(name, ".md") && !strings.EqualFold(name, "README.md"):
			file, fallback = name, strings.TrimSuffix(name, ".md")
		default:
			continue
		}
		where := src.name(file)
		data, err := fs.ReadFile(src.FS, file)
		if err != nil {
			warns = append(warns, Warning{Path: where, Err: err})
			continue
		}
		s, err := Parse(data, fallback)
		if err != nil {
			warns = append(warns, Warning{Path: where, Err: err})
			continue
		}
		s.Path = where
		if path.Dir(file) != "." {
			s.Files = src.others(path.Dir(file))
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, warns
}

func (src Source) name(file string) string {
	if src.Dir == "" {
		return "shipped:" + file
	}
	return filepath.Join(src.Dir, filepath.FromSlash(file))
}

// others lists the files of a skill folder other than SKILL.md (at most
// 50: a folder is a skill, not a project).
func (src Source) others(dir string) []string {
	var files []string
	fs.WalkDir(src.FS, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || len(files) >= 50 {
			return fs.SkipDir
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != dir {
			return fs.SkipDir
		}
		if !d.IsDir() && p != path.Join(dir, "SKILL.md") {
			files = append(files, src.name(p))
		}
		return nil
	})
	return files
}
