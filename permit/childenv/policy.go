package childenv

import (
	"path"
	"strings"
)

// Policy decides which of mm's environment variables a command sees
// (after codex's shell environment policy). By default every variable is
// kept except those whose name holds KEY, SECRET, TOKEN, PASSWORD or
// CREDENTIAL (in any case): `env` or `echo $MM_API_KEY` must not put a
// secret into the transcript the model — and its server — reads.
type Policy struct {
	// Keep names variables kept although their name looks secret
	// (GITHUB_TOKEN for gh). Shell patterns (* and ?), matched without
	// regard to case.
	Keep []string
	// Drop names more variables to drop; it wins over Keep. Patterns as
	// for Keep.
	Drop []string
	// Secrets are values that never reach a command, whatever the name
	// of the variable holding them (the model server's API key); they are
	// also masked in what the command prints. Empty values are ignored.
	Secrets []string
	// Learned are the secrets learned after the policy was made (a config
	// read again): dropped and masked as they come; nil learns none.
	Learned *Secrets
}

// secretWords mark a variable name as holding a secret.
var secretWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "CREDENTIAL"}

// Environ returns the variables of environ (as os.Environ gives them)
// that the policy lets through.
func (p Policy) Environ(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if p.keeps(name, value) {
			out = append(out, kv)
		}
	}
	return p.Learned.Filter(out)
}

// Dropped names the variables of environ the policy drops: what a
// terminal that starts from another process's environment (the editor's,
// which mm's own mirrors) must unset.
func (p Policy) Dropped(environ []string) []string {
	var out []string
	kept := p.Learned.Filter(environ)
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if name != "" && (!p.keeps(name, value) || !contains(kept, kv)) {
			out = append(out, name)
		}
	}
	return out
}

func (p Policy) keeps(name, value string) bool {
	for _, s := range p.Secrets {
		if carries(value, s) {
			return false
		}
	}
	if matchAny(p.Drop, name) {
		return false
	}
	if matchAny(p.Keep, name) {
		return true
	}
	return !SecretName(name)
}

// SecretName reports whether a variable's name says it holds a secret
// (KEY, SECRET, TOKEN, PASSWORD or CREDENTIAL in it, in any case).
func SecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// carries reports whether value holds the secret: equal to it, or, for a
// secret long enough not to be a common word, containing it (a variable
// AUTH="Bearer <key>" under an innocent name).
func carries(value, secret string) bool {
	switch {
	case secret == "":
		return false
	case len(secret) >= minSecret:
		return strings.Contains(value, secret)
	}
	return value == secret
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToUpper(p), strings.ToUpper(name)); ok {
			return true
		}
	}
	return false
}

// minSecret is the shortest secret masked in output: masking a two-letter
// "key" would garble every line.
const minSecret = 8

// Mask replaces each secret in s by [redacted].
func (p Policy) Mask(s string) string {
	for _, sec := range append(p.Learned.snapshot(nil), p.Secrets...) {
		if len(sec) >= minSecret {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}
