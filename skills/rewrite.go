package skills

import (
	"fmt"
	"strings"
)

// Line is the text a skill invocation becomes, also used by skill
// routing so both read the same.
func Line(name, params string) string {
	params = strings.TrimSpace(params)
	if params == "" {
		params = "none"
	}
	return fmt.Sprintf("[skill: %s — load it with read_skill and carry out its steps now; parameters: %s]", name, params)
}

// Rewritten is what Rewrite made of a prompt.
type Rewritten struct {
	// Prompt goes to the model (the original when nothing matched).
	Prompt string
	// Answer, when set, is shown to the user instead of running a turn
	// (/skills, or a slash command naming no skill).
	Answer string
	// Notes are one-line remarks for the user (an unknown $name close to
	// a skill's name).
	Notes []string
}

// Rewrite turns `/name params` at the start of the prompt and `$name
// params` anywhere (params: the rest of that line) into Line. `/skills`
// answers the list. A slash command that names no skill answers one line
// with the nearest names, unless reserved says another part of mm owns it
// (/compact, /new…). An unknown `$name` is left as written (it may be a
// shell variable) with a note when a skill's name is close.
func (s *Set) Rewrite(prompt string, reserved func(name string) bool) Rewritten {
	trimmed := strings.TrimLeft(prompt, " \t\r\n")
	if name, rest, ok := command(trimmed, '/'); ok {
		switch _, known := s.Lookup(name); {
		case known:
			return Rewritten{Prompt: Line(name, rest)}
		case name == "skills":
			return Rewritten{Answer: s.List()}
		case reserved != nil && reserved(name):
			return Rewritten{Prompt: prompt}
		default:
			return Rewritten{Answer: s.unknown(name, "/")}
		}
	}
	out := Rewritten{Prompt: prompt}
	lines := strings.Split(prompt, "\n")
	changed := false
	for i, line := range lines {
		for at := 0; at < len(line); {
			j := strings.IndexByte(line[at:], '$')
			if j < 0 {
				break
			}
			j += at
			at = j + 1
			if j > 0 && !isSpace(line[j-1]) && !strings.ContainsRune("([\"'`", rune(line[j-1])) {
				continue
			}
			name, rest, ok := command(line[j:], '$')
			if !ok {
				continue
			}
			if _, known := s.Lookup(name); !known {
				if near := s.Nearest(name, 3); len(near) > 0 {
					out.Notes = append(out.Notes, s.unknown(name, "$"))
				}
				continue
			}
			lines[i] = line[:j] + Line(name, rest)
			changed = true
			break
		}
	}
	if changed {
		out.Prompt = strings.Join(lines, "\n")
	}
	return out
}

// command reads `<sigil>name rest` at the start of s: name is a skill-like
// word followed by a space or the end ("/usr/bin" is not a command).
func command(s string, sigil byte) (name, rest string, ok bool) {
	if len(s) < 2 || s[0] != sigil {
		return "", "", false
	}
	end := 1
	for end < len(s) && isNameByte(s[end]) {
		end++
	}
	name = s[1:end]
	if !validName(name) || (end < len(s) && !isSpace(s[end])) {
		return "", "", false
	}
	if sigil == '$' {
		rest, _, _ = strings.Cut(s[end:], "\n")
	} else {
		rest = s[end:]
	}
	return name, strings.TrimSpace(rest), true
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// unknown is the one line for a name that is no skill.
func (s *Set) unknown(name, sigil string) string {
	line := fmt.Sprintf("no skill named %q", name)
	if near := s.Nearest(name, 3); len(near) > 0 {
		line += " — nearest: " + sigil + strings.Join(near, ", "+sigil)
	} else if names := s.Names(); len(names) > 0 {
		line += " — type /skills for the list"
	} else {
		line += " — no skills are installed (see docs/skills.md)"
	}
	return line
}

// List is /skills' answer: one line per skill with its hint.
func (s *Set) List() string {
	if len(s.All()) == 0 {
		return "No skills found. Put one in .mm/skills/NAME/SKILL.md (see docs/skills.md)."
	}
	var b strings.Builder
	b.WriteString("Skills (type /name or $name with its parameters):\n")
	for _, sk := range s.All() {
		fmt.Fprintf(&b, "- /%s", sk.Name)
		if sk.Hint != "" {
			fmt.Fprintf(&b, " <%s>", sk.Hint)
		}
		fmt.Fprintf(&b, " — %s\n", sk.Description)
	}
	return strings.TrimRight(b.String(), "\n")
}
